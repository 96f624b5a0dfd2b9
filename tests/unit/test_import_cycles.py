"""No import circle among the modules of ``analysis/`` or of ``ui/`` (issue 31, item 5): the
import graph of each package (grimp, the library under import-linter) holds no cycle, imports
inside functions included. A circle fails the test with its modules in order, e.g.
``analysis.x.a -> analysis.x.b -> analysis.x.a``: break it by moving what both need into a
module below them, not by hiding one import inside a function (grimp sees those too)."""

from __future__ import annotations

import grimp
import pytest


def import_cycles(package: str) -> list[str]:
    """One shortest cycle (``a -> b -> ... -> a``) for every set of modules of ``package`` that
    import each other round in a circle; ``[]`` when there is none. Imports under
    ``if TYPE_CHECKING:`` do not count (they never run)."""
    graph = grimp.build_graph(package, include_external_packages=False,
                              exclude_type_checking_imports=True, cache_dir=None)
    found, seen = [], set()
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back and frozenset(back) not in seen:
                seen.add(frozenset(back))
                found.append(" -> ".join((importer,) + back))
    return found


@pytest.mark.parametrize("package", ["analysis", "ui"])
def test_no_import_cycle(package):
    cycles = import_cycles(package)
    assert not cycles, f"import cycles in {package}/:\n" + "\n".join(cycles)


def test_a_cycle_through_a_function_level_import_is_found(tmp_path, monkeypatch):
    pkg = tmp_path / "loop_pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from loop_pkg.sub import b\n    return b\n")
    (pkg / "sub" / "b.py").write_text("from loop_pkg import c\n")
    (pkg / "c.py").write_text("import loop_pkg.a\n")
    (pkg / "d.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                              "    import loop_pkg.e\n")
    (pkg / "e.py").write_text("import loop_pkg.d\n")  # d -> e only when type checking
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_cycles("loop_pkg") == ["loop_pkg.a -> loop_pkg.sub.b -> loop_pkg.c -> loop_pkg.a"]
