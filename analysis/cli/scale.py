"""``--ray auto|ADDRESS`` (and ``--ray-workers N``) on the corpus commands: the study's
map/merge job (:mod:`analysis.core.execution.corpus`) runs on a Ray cluster
(:mod:`analysis.core.execution.raydata`) instead of this process; the numbers are the same
(docs/METHODS.md, "Shards merge exactly"). Where it runs is chosen once, by the placement of
these options (:func:`analysis.core.execution.placements.placement`); a command hands it each corpus
job (:func:`run_job`) and never asks itself. Without ``--ray`` nothing is imported from Ray."""

from __future__ import annotations

from analysis.cli.options import OptionError, positive_int
from analysis.core.errors import InputError


def ray_address(text: str) -> str:
    """``auto`` or ``[ray://]HOST:PORT``, with Ray installed (checked while parsing)."""
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.core.execution.raydata import check_address

    try:
        return check_address(text)
    except InputError as exc:
        raise OptionError(str(exc)) from None


def add_ray_options(p) -> None:
    p.add_argument("--ray", type=ray_address, default=None, metavar="auto|ADDRESS",
                   help="run on a Ray cluster: 'auto' (the cluster started on this machine, "
                        "else a local one on 127.0.0.1) or HOST:PORT / ray://HOST:PORT; needs "
                        "requirements-ray.txt (deploy/README.md)")
    p.add_argument("--ray-workers", type=positive_int, default=None,
                   help="Ray workers, each with its own copy of the model (default: one per "
                        "GPU of the cluster, else one per CPU)")


def placed(args):
    """The placement of the command's ``--ray`` and ``--ray-workers`` (in this process without
    ``--ray``), chosen once."""
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.core.execution.placements import placement

    return placement(getattr(args, "ray", None), getattr(args, "ray_workers", None))


def run_job(job, models, dataset, args, progress=None, here=None):
    """``job`` over ``dataset`` where :func:`placed` puts it: on Ray with ``--ray``, else in
    this process with ``models`` (``here()``: the study's own in-process run of the job)."""
    return placed(args).map_merge(job, models, dataset, progress, here)
