"""User-facing error types shared by the library (messages are one plain line)."""


class InputError(ValueError):
    """The user's input (text, option, file) cannot be analysed as given."""


class DataError(ValueError):
    """A data file or dataset cannot be used as given."""
