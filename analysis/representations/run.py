"""The corpus part, run: :func:`corpus_job` checks the settings (one-line refusals) and builds
the map/merge job (:class:`analysis.representations.job.RepresentationsJob`) that a shard
runner or a Ray cluster runs; :func:`corpus_representations` runs it in the process, the whole
corpus as one shard. Above :mod:`.corpus` (what a corpus's rows give) and :mod:`.job` (map and
merge)."""

from __future__ import annotations

from typing import Callable, Sequence

from analysis.representations.corpus import (MAX_POINTS, CorpusResult, check_probes,
                                             corpus_kind)
from analysis.representations.job import RepresentationsJob
from analysis.representations.probes import FOLDS
from analysis.representations.projection import check_method
from analysis.representations.states import check_same_shape


def corpus_representations(loaded, dataset, compare=None, probes: Sequence[str] | None = None,
                           max_sentences: int | None = None, method: str = "pca",
                           max_points: int = MAX_POINTS, folds: int = FOLDS, seed: int = 0,
                           batch_size: int = 32, scatter: bool = True,
                           progress: Callable[[int, int], None] | None = None) -> CorpusResult:
    """Everything of the corpus part for ``loaded`` (and ``compare``, same shape);
    ``progress(done, 100)`` along the way. The in-process run of :func:`corpus_job`'s job
    (one shard: the whole corpus)."""
    job, dataset = corpus_job(loaded, dataset, compare, probes, max_sentences, method,
                              max_points, folds, seed, batch_size, scatter)

    def stage(start, width):
        if progress is None:
            return None
        return lambda done, total: progress(start + int(width * done / max(1, total)), 100)

    part = job.map((loaded, compare), dataset, range(len(dataset)), stage(0, 60))
    result = job.merge([part], progress=stage(60, 40))
    if progress is not None:
        progress(100, 100)
    return result


def corpus_job(loaded, dataset, compare=None, probes: Sequence[str] | None = None,
               max_sentences: int | None = None, method: str = "pca",
               max_points: int = MAX_POINTS, folds: int = FOLDS, seed: int = 0,
               batch_size: int = 32, scatter: bool = True):
    """(the :class:`analysis.representations.job.RepresentationsJob` of these settings, the
    corpus cut to ``max_sentences``) after every check (one-line refusals)."""
    check_method(method)
    kind = corpus_kind(dataset)
    probes = check_probes(dataset, probes)
    if compare is not None:
        check_same_shape(loaded, compare)
    if max_sentences is not None and len(dataset) > max_sentences:
        dataset = dataset.select(range(int(max_sentences)))
    job = RepresentationsJob(loaded.spec, compare.spec if compare is not None else None, kind,
                             tuple(probes), batch_size, method, max_points, folds, seed,
                             scatter)
    return job, dataset
