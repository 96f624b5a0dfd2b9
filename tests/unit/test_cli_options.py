"""analysis/cli/options.py: each option type accepts its range and names it in one plain line
otherwise; output files must be writable where they are asked for."""

from __future__ import annotations

import pytest

from analysis.cli import options
from analysis.cli.options import OptionError
from analysis.core.errors import InputError


def test_numbers_in_range():
    assert options.positive_int("3") == 3 and options.seed("0") == 0
    assert options.seed(str(2 ** 32 - 1)) == 2 ** 32 - 1
    assert options.positive_float("0.5") == 0.5 and options.fraction("0") == 0.0
    assert options.unit("1") == 1.0


@pytest.mark.parametrize("check, text, message", [
    (options.positive_int, "0", "must be a whole number of at least 1, not '0'"),
    (options.positive_int, "x", "must be a whole number of at least 1, not 'x'"),
    (options.seed, str(2 ** 32), "must be a whole number from 0 to 4294967295, not '4294967296'"),
    (options.positive_float, "nan", "must be a finite number above 0, not 'nan'"),
    (options.fraction, "1", "must be a number from 0 up to (not including) 1, not '1'"),
    (options.unit, "1.5", "must be a number from 0 to 1, not '1.5'"),
])
def test_out_of_range_is_one_plain_line(check, text, message):
    with pytest.raises(OptionError) as err:
        check(text)
    assert str(err.value) == message


def test_max_length_must_fit_the_model():
    options.check_max_length(128, 512)
    with pytest.raises(InputError, match=r"--max-length must be from 1 to 512 \(this model's "
                                         r"maximum\), not 600\."):
        options.check_max_length(600, 512)


def test_out_file(tmp_path):
    check = options.out_file(".json")
    assert check.__name__ == "json_file"
    assert check(str(tmp_path / "out.json")) == str(tmp_path / "out.json")
    with pytest.raises(OptionError, match="must name a .json file"):
        check(str(tmp_path / "out.txt"))
    with pytest.raises(OptionError, match="names a folder that does not exist"):
        check(str(tmp_path / "missing" / "out.json"))
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(OptionError, match="is a folder"):
        check(str(tmp_path / "dir.json"))
    assert options.out_file(".html").__name__ == "html_file"
