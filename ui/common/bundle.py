"""One JavaScript module from the ES modules in ``ui/common/frontend/`` (no Node, no npm).

Streamlit's v2 components take a component's JavaScript as one string and load it with a
dynamic ``import()`` of a blob URL, so a relative ``import "./x.js"`` inside it cannot resolve.
The sources are real ES modules (Node's test runner imports them as they are); for the
browser, ``bundle(entry)`` puts every module the entry reaches, dependencies first, each in
its own function scope (its top-level names stay private), binds its imports to the exports
of the modules it names, and ends with ``export default <entry's main>``. The result is one
ES module with no global names, whatever order the files are listed in.

The sources keep to a small, checked subset (anything else is refused with the file named):
``import { a, b as c } from "./file.js";`` and ``export function / const / let / class``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Mapping

IMPORT = re.compile(r'^import\s*\{([^}]*)\}\s*from\s*"\./([\w.-]+\.js)";[ \t]*$', re.M)
EXPORT = re.compile(r"^export\s+(?:async\s+)?(function\*?|const|let|class)\s+([A-Za-z_$][\w$]*)",
                    re.M)
OTHER = re.compile(r"^\s*(import\b(?!\()|export\b)", re.M)


class BundleError(ValueError):
    """A frontend source outside the subset the bundler reads, or an import cycle."""


def parse(name: str, text: str) -> tuple[list[tuple[str, list[tuple[str, str]]]], list[str], str]:
    """``(imports, exports, body)`` of one module: imports as (file, [(name, local)]), the
    exported names, and the text with import lines removed and ``export`` keywords dropped."""
    imports = []
    for names, source in IMPORT.findall(text):
        pairs = []
        for part in (p.strip() for p in names.split(",")):
            if not part:
                continue
            m = re.fullmatch(r"([A-Za-z_$][\w$]*)(?:\s+as\s+([A-Za-z_$][\w$]*))?", part)
            if not m:
                raise BundleError(f"{name}: cannot read the import {part!r}.")
            pairs.append((m.group(1), m.group(2) or m.group(1)))
        imports.append((source, pairs))
    body = IMPORT.sub("", text)
    exports = [m.group(2) for m in EXPORT.finditer(body)]
    body = EXPORT.sub(lambda m: m.group(0).split(None, 1)[1], body)
    left = OTHER.search(body)
    if left:
        line = body[left.start():].splitlines()[0].strip()
        raise BundleError(f"{name}: the bundler reads only `import {{ ... }} from \"./x.js\";` "
                          f"and `export function/const/let/class`, not {line!r}.")
    return imports, exports, body


def bundle(entry: str, main: str, read: Callable[[str], str],
           overrides: Mapping[str, str] | None = None) -> str:
    """The one ES module of ``entry`` and everything it imports; ``export default`` is the
    entry's export ``main``. ``read(file)`` gives a module's text; ``overrides`` replaces a
    file's text (the constants module is generated from Python at build time)."""
    overrides = dict(overrides or {})
    parsed: dict[str, tuple] = {}
    order: list[str] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in path:
            raise BundleError("Import cycle: " + " -> ".join((*path, name)))
        if name in parsed:
            return
        text = overrides[name] if name in overrides else read(name)
        parsed[name] = parse(name, text)
        for source, _ in parsed[name][0]:
            visit(source, (*path, name))
        order.append(name)

    visit(entry, ())
    if main not in parsed[entry][1]:
        raise BundleError(f"{entry} does not export {main}.")
    out = ["// Bundled by ui/common/bundle.py from ui/common/frontend/ (do not edit).",
           "const modules = {};"]
    for name in order:
        imports, exports, body = parsed[name]
        for source, pairs in imports:
            missing = [n for n, _ in pairs if n not in parsed[source][1]]
            if missing:
                raise BundleError(f"{name} imports {', '.join(missing)}, which {source} "
                                  "does not export.")
        binds = [f"const {{ {', '.join(n if n == l else f'{n}: {l}' for n, l in pairs)} }} = "
                 f"modules[{source!r}];" for source, pairs in imports]
        out += [f"// ---- {name}", f"modules[{name!r}] = (() => {{", *binds, body.strip(),
                f"return {{ {', '.join(exports)} }};", "})();"]
    out += [f"const {main} = modules[{entry!r}].{main};", f"export default {main};", ""]
    return "\n".join(out)


def read_from(folder: Path) -> Callable[[str], str]:
    return lambda name: (folder / name).read_text(encoding="utf-8")
