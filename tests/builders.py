"""Small helpers shared by the test modules."""


def rows(ds):
    return list(zip(ds["text"], ds["text_pair"]))


def one_line(exc) -> str:
    msg = str(exc.value)
    assert "\n" not in msg and msg
    return msg
