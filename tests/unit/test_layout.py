"""The UI layout's rules (issue 18): every session-state key, URL parameter and cache key is
named once, in a state module (``ui/common/frame/state.py``, ``ui/<study>/state.py``); pages and UI
blocks use those names, never a string literal."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A string session key written where it is used: st.session_state["k"] / .get("k") /
# .setdefault("k") / .pop("k") / "k" in st.session_state, st.query_params["k"] / .get("k"), a
# widget's key="k" or key=f"...", and a one-letter alias of st.session_state.
PATTERNS = {
    "session_state[...]": re.compile(r"session_state\s*\[\s*f?[\"']"),
    "session_state.get/setdefault/pop": re.compile(
        r"session_state\s*\.\s*(get|setdefault|pop)\(\s*f?[\"']"),
    "in session_state": re.compile(r"f?[\"'][^\"'\n]*[\"']\s+(not\s+)?in\s+st\.session_state"),
    "query_params[...]": re.compile(r"query_params\s*(\[|\.get\(|\.pop\()\s*f?[\"']"),
    "key=literal": re.compile(r"\bkey\s*=\s*f?[\"']"),
    "session_state alias": re.compile(r"^\s*\w+\s*=\s*st\.session_state\s*$"),
}

ALLOWED_FOR_NOW: set[str] = set()  # no exception: every page and package follows the rule


def _state_module(rel: str) -> bool:
    return rel.startswith("ui/") and rel.endswith("/state.py")


def literal_keys(files) -> list[str]:
    """``path:line: what`` for every string session key outside the state modules."""
    found = []
    for path in files:
        rel = path.relative_to(ROOT).as_posix()
        if _state_module(rel):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0] if not line.lstrip().startswith(("\"", "'")) else ""
            for what, pattern in PATTERNS.items():
                if pattern.search(code):
                    found.append(f"{rel}:{n}: {what}: {line.strip()}")
    return found


def _ui_files():
    return sorted(list((ROOT / "pages").glob("*.py")) + list((ROOT / "ui").rglob("*.py")))


def test_no_string_session_key_outside_the_state_modules():
    files = [p for p in _ui_files()
             if p.relative_to(ROOT).as_posix() not in ALLOWED_FOR_NOW]
    found = literal_keys(files)
    assert not found, "string session keys outside ui/*/state.py:\n" + "\n".join(found)


def test_the_check_finds_each_kind_of_literal(tmp_path, monkeypatch):
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    page = tmp_path / "pages" / "x.py"
    page.parent.mkdir()
    page.write_text('\n'.join([
        'a = st.session_state["k"]',
        'b = st.session_state.get("k")',
        'st.session_state.setdefault(f"{p}_k", 1)',
        'if "k" in st.session_state: pass',
        'c = st.query_params.get("k")',
        'st.button("Go", key="go")',
        'S = st.session_state',
        'st.button("Go", key=state.GO)  # key="in a comment" is fine',
        'st.session_state[state.GO] = 1',
    ]))
    state = tmp_path / "ui" / "x" / "state.py"
    state.parent.mkdir(parents=True)
    state.write_text('GO = "go"\nst.session_state["go"] = 1\n')
    found = literal_keys([page, state])
    assert [f.split(":")[1] for f in found] == ["1", "2", "3", "4", "5", "6", "7"]


def test_the_allow_list_names_only_files_that_exist():
    assert all((ROOT / rel).is_file() for rel in ALLOWED_FOR_NOW)
