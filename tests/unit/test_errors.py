"""analysis/core/errors.py: the two error types a user sees as one plain line."""

from __future__ import annotations

import pytest

from analysis.core.errors import DataError, InputError


@pytest.mark.parametrize("kind", [InputError, DataError])
def test_errors_are_value_errors_with_their_message(kind):
    with pytest.raises(ValueError) as err:
        raise kind("The file is empty.")
    assert type(err.value) is kind and str(err.value) == "The file is empty."
    assert not issubclass(InputError, DataError) and not issubclass(DataError, InputError)
