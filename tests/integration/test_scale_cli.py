"""``--ray`` on the corpus commands: validated while parsing (exit 2 and one line), and
without it nothing is imported from Ray."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from analysis.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def corpus(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("The soup was cold.\nGreat staff.\tThe view too.\n", encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("command", ["noop", "drift", "syntax"])
@pytest.mark.parametrize("address", ["nowhere", "10.0.0.1", "ray://host", "host:99999", ""])
def test_a_bad_ray_address_is_exit_2_and_one_line(command, address, corpus, tmp_path, capsys):
    extra = ["--after", "default"] if command == "drift" else []
    rc = main([command, "--data", corpus, *extra, "--out", str(tmp_path / "o.json"),
               "--ray", address])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err
    assert err.startswith("error: --ray must be 'auto' or a Ray address HOST:PORT")


def test_ray_not_installed_is_exit_2_and_one_line(corpus, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # what find_spec sees when it is absent
    rc = main(["noop", "--data", corpus, "--out", str(tmp_path / "o.json"), "--ray", "auto"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err
    assert err == ("error: --ray cannot be used: Ray is not installed (install it with "
                   "'pip install -r requirements-ray.txt').")


def test_without_ray_nothing_is_imported_from_ray(corpus, tiny_model_dir, tmp_path):
    """A whole noop command in a fresh interpreter, then a look at sys.modules."""
    out = tmp_path / "o.json"
    code = (
        "import sys\n"
        "from analysis.cli import main\n"
        f"rc = main(['noop', '--data', {corpus!r}, '--model', {str(tiny_model_dir('bert'))!r},"
        f" '--out', {str(out)!r}])\n"
        "assert rc == 0, rc\n"
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().splitlines()[-1] == "[]"
    assert out.exists() and '"n_examples": 2' in out.read_text()
