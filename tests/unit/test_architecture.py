"""The rules docs/ARCHITECTURE.md states, each kept by a test (issue 44): pages only render, the
library never imports Streamlit, file and function sizes, where Ray, forward hooks, XML parsing
and the job placement may live, and the layer contracts of .importlinter. Each check is a plain
function over source text, tried on a hand-made breach too, so a rule that stopped checking
anything would fail here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Sizes (lines): what a reader can hold; the page flows are the largest functions.
LIBRARY_FILE_LINES = 500   # a module of analysis/, ui/ or bench/
FUNCTION_LINES = 110       # any function outside a page's render()
RENDER_LINES = 210         # a page's render() (ui/<study>/page.py)


def _py(*folders: str) -> list[Path]:
    return sorted(p for f in folders for p in (ROOT / f).rglob("*.py")
                  if "__pycache__" not in p.parts)


def _rel(p: Path) -> str:
    return p.relative_to(ROOT).as_posix()


def imports_of(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every import in ``tree``, those inside functions too."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
    return out


# -- pages only render ---------------------------------------------------------------------

def page_breaches(path: Path, source: str) -> list[str]:
    """What makes ``pages/<study>.py`` more than a call of ``ui.<study>.page.render()``: it
    may hold a docstring, that one import and that one call, nothing else."""
    study = path.stem
    body = ast.parse(source).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    ok = (len(body) == 2
          and isinstance(body[0], ast.ImportFrom) and body[0].module == f"ui.{study}.page"
          and [a.name for a in body[0].names] == ["render"]
          and isinstance(body[1], ast.Expr) and isinstance(body[1].value, ast.Call)
          and isinstance(body[1].value.func, ast.Name) and body[1].value.func.id == "render"
          and not body[1].value.args and not body[1].value.keywords)
    return [] if ok else [f"pages/{path.name}: more than `from ui.{study}.page import render; "
                          f"render()`"]


def test_every_page_only_calls_its_study_render():
    found = []
    for page in sorted((ROOT / "pages").glob("*.py")):
        found += page_breaches(page, page.read_text(encoding="utf-8"))
        flow = ROOT / "ui" / page.stem / "page.py"
        tree = ast.parse(flow.read_text(encoding="utf-8")) if flow.is_file() else ast.Module([])
        if not any(isinstance(n, ast.FunctionDef) and n.name == "render" for n in tree.body):
            found.append(f"{_rel(flow)}: no render()")
    assert not found, "\n".join(found)


def test_the_page_check_sees_a_page_that_does_more():
    path = Path("pages/noop.py")
    assert page_breaches(path, '"""Doc."""\nfrom ui.noop.page import render\n\nrender()\n') == []
    assert page_breaches(path, "from ui.noop.page import render\nimport analysis\nrender()\n")
    assert page_breaches(path, "from ui.noop.page import render\nrender()\nx = 1\n")
    assert page_breaches(path, "from ui.search.page import render\nrender()\n")


def _strings(tree: ast.Module) -> set[str]:
    """Every string ``tree`` spells out: its constants, and its f-strings with the module's
    own string constants put in (``f"pages/{DEFAULT_PAGE}.py"``)."""
    names = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
             for t in n.targets if isinstance(t, ast.Name)
             and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            out.add(n.value)
        elif isinstance(n, ast.JoinedStr):
            parts = [p.value if isinstance(p, ast.Constant) else
                     names.get(p.value.id, "?") if isinstance(p, ast.FormattedValue)
                     and isinstance(p.value, ast.Name) else "?" for p in n.values]
            out.add("".join(map(str, parts)))
    return out


def test_app_navigates_to_every_page_file_and_no_other():
    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    named = {s for s in _strings(tree) if s.startswith("pages/") and s.endswith(".py")}
    files = {f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py")}
    assert named == files


# -- placement: where each kind of code may live --------------------------------------------

# module prefix -> the folders (or files) allowed to import it, besides tests/ and bench/:
# Streamlit only in the interface, Ray only where a placement runs a job, no XML parser but
# defusedxml's (the standard library's ElementTree only to build elements and name its error)
ONLY_IN = {
    "streamlit": ("ui/", "app.py", "pages/"),
    "ray": ("analysis/core/execution/",),
    "xml": (),
    "lxml": (),
}
XML_SAFE_NAMES = {"Element", "SubElement", "tostring", "ParseError"}  # build, or catch


def placement_breaches(files: dict[str, str]) -> list[str]:
    """``path:line: module`` for every import of a module of :data:`ONLY_IN` outside its
    allowed places (``files``: relative path -> source)."""
    found = []
    for rel, source in files.items():
        tree = ast.parse(source)
        builders = {n.lineno for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                    and n.module == "xml.etree.ElementTree"
                    and {a.name for a in n.names} <= XML_SAFE_NAMES}
        for line, module in imports_of(tree):
            allowed = ONLY_IN.get(module.split(".")[0])
            if allowed is not None and not rel.startswith(allowed) and line not in builders:
                found.append(f"{rel}:{line}: {module}")
    return found


def test_heavy_or_risky_modules_are_imported_only_where_the_map_says():
    files = {_rel(p): p.read_text(encoding="utf-8")
             for p in _py("analysis", "ui", "pages") + [ROOT / "app.py"]}
    found = placement_breaches(files)
    assert not found, "imported outside its place (docs/ARCHITECTURE.md):\n" + "\n".join(found)


def test_the_placement_check_sees_each_breach():
    found = placement_breaches({
        "analysis/noop/x.py": "import streamlit as st\n",
        "analysis/search/y.py": "def f():\n    import ray\n",
        "ui/z.py": "from xml.etree import ElementTree\n",
        "analysis/w.py": "from xml.etree.ElementTree import fromstring, Element\n",
        "analysis/core/execution/raydata.py": "import ray\n",
        "ui/ok.py": "import streamlit\n",
        "analysis/report/ok.py": "from xml.etree.ElementTree import Element, tostring\n",
    })
    assert found == ["analysis/noop/x.py:1: streamlit", "analysis/search/y.py:2: ray",
                     "ui/z.py:1: xml.etree", "analysis/w.py:1: xml.etree.ElementTree"]


HOOK_CALLS = {"register_forward_hook", "register_forward_pre_hook",
              "register_full_backward_hook", "register_full_backward_pre_hook"}


def hook_breaches(files: dict[str, str]) -> list[str]:
    """Every ``.register_*_hook(`` call outside analysis/core/hooks.py (hooks are registered in
    one place, and act only on the registering thread's forwards)."""
    found = []
    for rel, source in files.items():
        if rel == "analysis/core/hooks.py":
            continue
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in HOOK_CALLS:
                found.append(f"{rel}:{node.lineno}: {node.func.attr}")
    return found


def test_forward_hooks_are_registered_only_in_analysis_core_hooks():
    files = {_rel(p): p.read_text(encoding="utf-8") for p in _py("analysis", "ui")}
    found = hook_breaches(files)
    assert not found, "\n".join(found)
    assert hook_breaches({"analysis/x.py": "m.register_forward_hook(f)\n"}) == \
        ["analysis/x.py:1: register_forward_hook"]


# -- sizes ----------------------------------------------------------------------------------

def size_breaches(files: dict[str, str]) -> list[str]:
    """Files over :data:`LIBRARY_FILE_LINES`, functions over :data:`FUNCTION_LINES` (a page's
    ``render`` over :data:`RENDER_LINES`)."""
    found = []
    for rel, source in files.items():
        n = source.count("\n") + (not source.endswith("\n"))
        if n > LIBRARY_FILE_LINES:
            found.append(f"{rel}: {n} lines (at most {LIBRARY_FILE_LINES})")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size = node.end_lineno - node.lineno + 1
                cap = RENDER_LINES if (rel.endswith("/page.py") and node.name == "render") \
                    else FUNCTION_LINES
                if size > cap:
                    found.append(f"{rel}:{node.lineno}: {node.name}() {size} lines "
                                 f"(at most {cap})")
    return found


def test_files_and_functions_stay_readable():
    files = {_rel(p): p.read_text(encoding="utf-8") for p in _py("analysis", "ui", "bench")}
    found = size_breaches(files)
    assert not found, "\n".join(found)


def test_the_size_check_counts_lines():
    long_fn = "def f():\n" + "    x = 1\n" * FUNCTION_LINES
    assert size_breaches({"analysis/a.py": long_fn}) == \
        [f"analysis/a.py:1: f() {FUNCTION_LINES + 1} lines (at most {FUNCTION_LINES})"]
    assert size_breaches({"ui/x/page.py": long_fn.replace("def f", "def render")}) == []
    assert size_breaches({"analysis/b.py": "x = 1\n" * (LIBRARY_FILE_LINES + 1)})


# -- the layer contracts (.importlinter), as CI's lint-imports checks them ------------------

def test_the_layer_contracts_hold():
    pytest.importorskip("importlinter", reason="import-linter is not installed "
                        "(requirements-dev.txt)")
    from importlinter.cli import lint_imports

    code = lint_imports(config_filename=str(ROOT / ".importlinter"))
    assert code == 0, "lint-imports found a broken contract (run `lint-imports` for details)"
