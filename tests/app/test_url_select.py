"""``ui.common.frame.url_select`` on a one-widget script: a choice whose page default is not the
widget's first option stays in the URL when the first option is picked (Streamlit's own
``bind`` leaves the first option out, so such a link opened on the page's default: seen in
Chromium), the default itself is left out, a link restores the value, a link carrying an
option's label (written by ``bind``) is read as that option, and anything else falls back."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _script():
    import streamlit as st

    from ui.common.frame.url_select import url_choice

    names = {"a": "Apple", "b": "Banana", "c": "Cherry"}
    v = url_choice(st, "Fruit", list(names), key="k", default="c", format_func=names.get,
                   widget=st.session_state.get("_widget", "selectbox"))
    st.write(f"VALUE={v}")


def _open(widget: str = "selectbox", **params) -> AppTest:
    at = AppTest.from_function(_script, default_timeout=60)
    at.session_state["_widget"] = widget
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def _value(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("VALUE="))


def _url(at):
    value = at.query_params.get("k")
    return value[0] if isinstance(value, list) else value


def test_the_first_option_stays_in_the_link_when_the_default_is_another():
    for widget in ("selectbox", "radio"):
        at = _open(widget)
        assert _value(at) == "VALUE=c" and _url(at) is None  # the default: not in the URL
        getattr(at, widget)(key="k").set_value("a").run()
        assert _value(at) == "VALUE=a" and _url(at) == "a", widget
        fresh = _open(widget, k=_url(at))
        assert _value(fresh) == "VALUE=a", widget
        getattr(at, widget)(key="k").set_value("c").run()
        assert _url(at) is None, widget


def test_a_label_in_a_link_is_that_option_and_anything_else_the_default():
    at = _open(k="Banana")  # a link Streamlit's bind wrote: the label
    assert _value(at) == "VALUE=b" and _url(at) == "b"
    for bad in ("banana", "<b>x</b>", "9"):
        at = _open(k=bad)
        assert _value(at) == "VALUE=c" and _url(at) is None, bad


def _following():
    import streamlit as st

    from ui.common.frame.url_select import url_choice

    result = st.session_state.get("_result", "r1")  # a rerun's result and its best option
    best = {"r1": "c", "r2": "b"}[result]
    v = url_choice(st, "Head", ["a", "b", "c"], key="k", default=best, follows=result)
    st.write(f"VALUE={v}")


def test_a_result_s_default_follows_a_new_result():
    """Issue 49: Causal patching's head picker stayed on the last result's head (and wrote it
    into the URL) after an edited counterfactual gave another best head."""
    at = AppTest.from_function(_following, default_timeout=60).run()
    assert _value(at) == "VALUE=c" and _url(at) is None
    at.selectbox(key="k").set_value("a").run()
    assert _value(at) == "VALUE=a" and _url(at) == "a"
    at.run()  # the same result: the visitor's choice stays
    assert _value(at) == "VALUE=a"
    at.session_state["_result"] = "r2"
    at.run()  # a new result: its own best, out of the URL
    assert _value(at) == "VALUE=b" and _url(at) is None
    link = AppTest.from_function(_following, default_timeout=60)
    link.session_state["_result"] = "r2"
    link.query_params["k"] = "a"
    link.run()  # a link's choice wins on the run that opens it
    assert _value(link) == "VALUE=a" and _url(link) == "a"
