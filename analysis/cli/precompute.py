"""``precompute [STUDY ...]``: the example checkpoint's results that a first visitor sees at
once (issue 49), written to ``data/precomputed/<study>.json`` with the recipe they were made
with (:func:`analysis.core.example.write_precomputed`). Every registered study with an
``example`` (:mod:`analysis.cli.studies`) runs ``STUDY.example()``'s inputs through
``STUDY.run``, the same call as its own command; a page shows the file, labelled, while the
example is missing or being built, and the live result once it is ready. Run it again after a
change of the recipe (a file of another recipe is never shown)."""

from __future__ import annotations

import datetime as dt
import sys
import time
from pathlib import Path

from analysis.cli.options import out_folder
from analysis.cli.progress import progress_bar
from analysis.cli.studies import NAMES, on_example, study, with_example
from analysis.core.errors import InputError

COMMAND = "python -m analysis precompute"


def register(sub) -> None:
    p = sub.add_parser(
        "precompute", help="the example checkpoint's results for a first visit -> "
                           "data/precomputed/<study>.json",
        description="Run every study whose page opens on the example checkpoint on its "
                    "page's first view (or only the STUDY names given) and write the results "
                    "with the example's recipe, for the pages to show while the example is "
                    "missing or being built. Needs the example checkpoint (python -m "
                    "analysis aspects example).")
    p.add_argument("studies", nargs="*", metavar="STUDY",
                   help="studies to precompute (default: every one with an example view)")
    p.add_argument("--out", default=None, type=out_folder,
                   help="folder of the files (default: the project's data/precomputed)")
    p.set_defaults(func=run)


def run(args) -> int:
    # lazy: the example's loader imports the fine-tuning pipeline (torch)
    from analysis.core.example import example_ready, missing_message, write_precomputed

    for name in args.studies:  # checked before the (long) work of the others
        found = study(name) if name in NAMES else None
        if found is None or found.example is None or not on_example(found.example()):
            have = ", ".join(with_example()) or "none"
            raise InputError(f"{name} is not a study with an example view; use one of: "
                             f"{have}.")
    studies = {name: study(name) for name in args.studies} if args.studies else with_example()
    if not example_ready():
        raise InputError(missing_message())
    made = dt.date.today().isoformat()
    root = Path(args.out) if args.out else None
    for name, one in studies.items():
        t0 = time.perf_counter()
        with progress_bar(100, unit="%") as update:
            def progress(fraction: float, text: str) -> None:
                if update:
                    update(int(round(100 * fraction)), 100)

            result = one.run(one.example(), progress=progress)
        path = write_precomputed(name, result.to_json(), f"{COMMAND} {name}", made, root=root)
        print(f"wrote {path}: {path.stat().st_size / 1000:.0f} kB, "
              f"{time.perf_counter() - t0:.0f}s", file=sys.stdout)
    return 0
