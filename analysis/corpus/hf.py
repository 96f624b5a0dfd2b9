"""Hugging Face datasets (an id in the local cache, or reachable online) -> a corpus."""

from __future__ import annotations

import os

from analysis.corpus.table import check_cap, make_dataset
from analysis.errors import DataError


def _offline_datasets():
    """Context manager: put datasets in offline mode when the hub is unreachable, so a missing
    dataset fails in a second instead of after the hub client's retries."""
    import contextlib

    @contextlib.contextmanager
    def ctx():
        from analysis.models import hub_reachable

        if os.environ.get("HF_HUB_OFFLINE") == "1" or hub_reachable():
            yield
            return
        import datasets.config as dcfg

        old = dcfg.HF_HUB_OFFLINE
        dcfg.HF_HUB_OFFLINE = True
        try:
            yield
        finally:
            dcfg.HF_HUB_OFFLINE = old

    return ctx()


def read_hf_dataset(name: str, split: str, column: str, pair_column: str | None = None,
                    max_examples: int | None = None):
    """A Hugging Face dataset (hub id in the local cache, or a local folder) -> Dataset."""
    max_examples = check_cap(max_examples)
    name = (name or "").strip()
    split = (split or "").strip() or "train"
    if not name:
        raise DataError("Give a Hugging Face dataset id, e.g. 'imdb'.")
    if not column:
        raise DataError("Give the name of the text column.")
    import datasets

    try:
        with _offline_datasets():
            ds = datasets.load_dataset(name, split=split)
    except Exception as exc:  # hub, cache, split and builder errors all end here
        first = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
        raise DataError(
            f"Could not load the dataset {name!r} (split {split!r}): it is not in the local "
            f"cache and the hub cannot be reached, or the id/split is wrong ({first})."
        ) from None
    if not isinstance(ds, datasets.Dataset):
        raise DataError(f"{name!r} split {split!r} is not a single table; pick one split.")
    cols = ds.column_names
    for col in (column, pair_column):
        if col is not None and col not in cols:
            raise DataError(f"The dataset {name!r} has no column {col!r} (columns: {', '.join(cols)}).")
    n_total = len(ds)
    texts, pairs, blank = [], [], 0
    for row in ds:
        t = row[column]
        if not isinstance(t, str) or not t.strip():
            blank += 1
            continue
        p = row[pair_column] if pair_column else None
        texts.append(t.strip())
        pairs.append(p.strip() if isinstance(p, str) and p.strip() else None)
        if max_examples is not None and len(texts) >= max_examples:
            break
    if not texts:
        raise DataError(f"The dataset {name!r} has no non-empty texts in column {column!r}.")
    notes = [f"Skipped {blank} row(s) with an empty text."] if blank else []
    if max_examples is not None and n_total > max_examples:
        notes.append(f"Capped to the first {len(texts)} of {n_total} rows.")
    return make_dataset(texts, pairs, notes)
