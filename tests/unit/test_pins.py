"""Issue 35: what the README's commands install is pinned. constraints.txt (``bash .ci/lock``,
pip-compile) holds one ``==`` pin for every package that a requirements file names, inside that
file's range; the README's two commands and the Dockerfile's install use it, and .ci/run runs
the README's test command verbatim in a fresh virtual environment."""

from __future__ import annotations

import re
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
FILES = ("requirements.txt", "requirements-dev.txt", "requirements-ray.txt")


def pins() -> dict[str, str]:
    out = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith((" ", "#", "-")):
            name, _, version = line.partition("==")
            out[canonicalize_name(name)] = version.strip()
    return out


def requirements(name: str) -> list[Requirement]:
    out = []
    for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            out.append(Requirement(line))
    return out


def test_every_requirement_is_pinned_inside_its_range():
    pinned = pins()
    assert len(pinned) > 80  # the dependencies of the dependencies too
    for name in FILES:
        for req in requirements(name):
            key = canonicalize_name(req.name)
            assert key in pinned, f"{req.name} ({name}) has no pin in constraints.txt"
            assert req.specifier.contains(pinned[key], prereleases=True), (
                f"{req.name}=={pinned[key]} is outside {name}'s {req.specifier}")
    # the CPU torch wheel served here (2.13.0+cpu) and the PyTorch CPU index's both satisfy it
    assert pinned["torch"] == "2.13.0"


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```bash\n(.+?)\n```", text)[:2]


def test_the_readme_commands_install_the_pins_and_ci_runs_the_test_command_in_a_venv():
    start, test = readme_commands()
    assert start.startswith("python3 -m pip install -r requirements.txt -c constraints.txt && ")
    assert test.startswith("python3 -m pip install -q -r requirements-dev.txt -c constraints.txt")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test in ci.splitlines()  # verbatim, a line of its own
    assert 'python3 -m venv "$CI_ENV/venv"' in ci and 'export PATH="$VIRTUAL_ENV/bin:$PATH"' in ci
    assert ci.index("python3 -m venv") < ci.index(test)
    docker = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "COPY requirements.txt constraints.txt deploy/check.py" in docker
