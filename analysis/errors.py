"""User-facing error types shared by the readers and studies (messages are one plain line)."""


class DataError(ValueError):
    """A data file or dataset cannot be used as given (message is user-facing, one line)."""
