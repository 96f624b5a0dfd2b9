"""Build the attention component's JavaScript: ``python -m ui.common.attention.build``.

1. Writes the generated modules of ``frontend/`` (``constants.js``, ``payload_spec.js``:
   :func:`ui.common.attention.contract.generated`).
2. Bundles each component's entry with esbuild (pinned in ``frontend/package.json``; install it
   once with ``npm ci`` in ``frontend/``) into ``frontend/dist/``: one ES module per component,
   which Streamlit loads as the component's JavaScript.

The bundle is committed: the app reads ``frontend/dist/`` and never needs Node. ``--check``
builds into a temporary folder and exits 1 when the committed files differ (the test of
tests/unit/test_attention_contract.py does the same).
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ui.common.attention.contract import generated

FRONTEND = Path(__file__).resolve().parent / "frontend"
DIST = FRONTEND / "dist"
ENTRIES = ("views.js", "head_view_single.js", "model_view.js")  # each exports default main
ESBUILD = FRONTEND / "node_modules" / ".bin" / "esbuild"
# the same options as package.json's "build" script (a test checks they agree)
OPTIONS = ("--bundle", "--format=esm", "--target=es2020", "--legal-comments=none",
           "--log-level=warning")


def write_generated(folder: Path = FRONTEND) -> list[str]:
    """Write the generated modules into ``folder``; the names of those that changed."""
    changed = []
    for name, text in generated().items():
        path = folder / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(name)
    return changed


def esbuild_available() -> bool:
    return ESBUILD.exists() and shutil.which("node") is not None


def bundle(out: Path) -> None:
    """esbuild every entry of ``frontend/`` into ``out`` (run in ``frontend/``, so the paths in
    the bundle's comments are the same on every machine)."""
    if not esbuild_available():
        raise RuntimeError(f"esbuild is not installed: run `npm ci` in {FRONTEND}.")
    subprocess.run([str(ESBUILD), *ENTRIES, *OPTIONS, f"--outdir={out}"], cwd=FRONTEND,
                   check=True)


def stale() -> list[str]:
    """The committed files that differ from a fresh generation and build (empty: up to date)."""
    out = [f"frontend/{name}" for name, text in generated().items()
           if not (FRONTEND / name).exists()
           or (FRONTEND / name).read_text(encoding="utf-8") != text]
    with tempfile.TemporaryDirectory() as tmp:
        # the bundle of the generated modules as they must be, not as they are on disk
        src = Path(tmp) / "src"
        shutil.copytree(FRONTEND, src, ignore=shutil.ignore_patterns("dist", "node_modules"))
        write_generated(src)
        subprocess.run([str(ESBUILD), *ENTRIES, *OPTIONS, f"--outdir={Path(tmp) / 'dist'}"],
                       cwd=src, check=True)
        for name in ENTRIES:
            fresh, kept = Path(tmp) / "dist" / name, DIST / name
            if not kept.exists() or not filecmp.cmp(fresh, kept, shallow=False):
                out.append(f"frontend/dist/{name}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ui.common.attention.build",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 when the committed files are stale")
    args = parser.parse_args(argv)
    if not esbuild_available():
        print(f"esbuild is not installed: run `npm ci` in {FRONTEND}.", file=sys.stderr)
        return 2
    if args.check:
        left = stale()
        if left:
            print("stale (run python -m ui.common.attention.build): " + ", ".join(left),
                  file=sys.stderr)
            return 1
        return 0
    write_generated()
    bundle(DIST)
    return 0


if __name__ == "__main__":
    sys.exit(main())
