"""The Head atlas against the sum of its studies (issue 45): the whole atlas of a model from an
empty cache, the same from the studies kept on disk, and each study's own library call timed
alone in the same run on the same models and data.

    nice python -m bench.studies.atlas                          # the example (default: built)
    nice python -m bench.studies.atlas --model STANDIN/bert-base-uncased-clf \\
        --before STANDIN/bert-base-uncased      # BERT-base size (bench/sizes/standins.py)
    python -m bench.studies.atlas --write-precomputed           # also data/precomputed/atlas.json

Targets (2 idle cores): the example's whole atlas from an empty cache <= 4 min; from the
studies' kept results <= 2 s; at BERT-base within 1.5x of the sum of its studies. The cache is
a fresh temporary folder (the example checkpoint and the stand-ins linked into it), so nothing
kept before counts; the models are loaded once and a first forward is run before any timing.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from bench import harness


def _fresh_cache() -> Path:
    """A temporary cache folder holding links to the real cache's example and stand-ins."""
    from analysis.core.example import cache_root

    real, tmp = cache_root(), Path(tempfile.mkdtemp(prefix="bench-atlas-"))
    for name in ("example-absa", "standins"):
        if (real / name).exists():
            (tmp / name).symlink_to(real / name)
    os.environ["DASHBOARD_CACHE"] = str(tmp)
    return tmp


def main(argv=None) -> int:
    p = harness.parser(__doc__)
    p.add_argument("--model", default="example")
    p.add_argument("--before", default="default")
    p.add_argument("--write-precomputed", action="store_true",
                   help="write data/precomputed/atlas.json from the fresh atlas (--model example)")
    p.add_argument("--from-json", default=None, metavar="ATLAS_JSON",
                   help="only write data/precomputed/atlas.json from the JSON of `python -m "
                        "analysis atlas --model example` (no timing)")
    args = p.parse_args(argv)
    if args.from_json:
        # lazy: the library after the arguments are read
        import json

        from analysis.atlas import precomputed
        from analysis.atlas.run import Result

        result = Result.from_json(json.loads(Path(args.from_json).read_text("utf-8")))
        print(f"wrote {precomputed.write(result)}")
        return 0
    tmp = _fresh_cache()
    # lazy: after the cache folder is set
    from analysis.atlas import precomputed
    from analysis.atlas.run import Inputs, compute, load_models, plan_steps
    from analysis.atlas.steps import cache_folder, read_data
    from analysis.core.example import machine_threads

    args.threads = args.threads or machine_threads()
    run = harness.start(args)
    inputs = Inputs(model=args.model, before=None if args.before == "none" else args.before)
    print(f"model {args.model}, before {args.before}")
    # imports, the first load and forward: paid before any timing
    warm, t = harness.timed(lambda: load_models(inputs))
    print(f"warm-up (imports, loading the models once): {t.wall:.1f} s")
    del warm

    fresh, t = harness.timed(lambda: compute(inputs, progress=None))
    t_atlas = t.wall
    again, t = harness.timed(lambda: compute(inputs))
    t_cached = t.wall
    assert again.to_json()["heads"] == fresh.to_json()["heads"]

    models = load_models(inputs)
    data = read_data(None, inputs.max_examples)
    rows, total = [], 0.0
    for step in plan_steps(inputs, data):
        _, t = harness.timed(lambda: step.describe(models)(lambda f, t: None))
        rows.append((step.title, t.wall))
        run.row(f"study alone: {step.title}", seconds=t.wall)
        total += t.wall
    print(f"\n{'study alone (its library call, models loaded)':<52} seconds")
    for title, dt in rows:
        print(f"  {title:<50} {dt:8.1f}")
    print(f"  {'sum of the studies':<50} {total:8.1f}")
    print(f"\nthe atlas from an empty cache (models loaded by it)  {t_atlas:8.1f}"
          f"   = {t_atlas / total:.2f}x the sum of its studies")
    print(f"the atlas from the studies kept on disk             {t_cached:8.2f}")
    run.row("the atlas from an empty cache", seconds=t_atlas, baseline="the sum of its studies",
            baseline_seconds=total, ratio=t_atlas / total)
    run.row("the atlas from the studies kept on disk", seconds=t_cached)
    run.done()
    if args.write_precomputed:
        if args.model != "example":
            print("--write-precomputed needs --model example")
            return 2
        out = precomputed.write(fresh, command="python -m bench.studies.atlas "
                                               "--write-precomputed")
        print(f"wrote {out}")
    shutil.rmtree(cache_folder(), ignore_errors=True)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
