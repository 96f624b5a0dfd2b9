"""Hugging Face datasets (an id in the local cache, or reachable online) -> a corpus."""

from __future__ import annotations

import contextlib
import os
import re

from analysis.core.corpus.files import cut_note
from analysis.core.corpus.table import Examples, make_dataset
from analysis.core.errors import DataError
from analysis.core.hub import hub_reachable

# A hub id: "name" or "owner/name" (letters, digits, '-', '_', '.'; no '..', no leading '.').
HUB_ID = re.compile(r"^(?!.*\.\.)[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")


def is_hub_id(name: str) -> bool:
    """Whether ``name`` has the shape of a hub dataset id (and so names no server path)."""
    return bool(HUB_ID.match(name or ""))


def _offline_datasets():
    """Context manager: put datasets in offline mode when the hub is unreachable, so a missing
    dataset fails in a second instead of after the hub client's retries."""
    @contextlib.contextmanager
    def ctx():
        if os.environ.get("HF_HUB_OFFLINE") == "1" or hub_reachable():
            yield
            return
        import datasets.config as dcfg  # lazy: datasets takes a second to import

        old = dcfg.HF_HUB_OFFLINE
        dcfg.HF_HUB_OFFLINE = True
        try:
            yield
        finally:
            dcfg.HF_HUB_OFFLINE = old

    return ctx()


def read_hf_dataset(name: str, split: str, column: str, pair_column: str | None = None,
                    max_examples: int | None = None, max_chars: int | None = None,
                    local_ok: bool = True, label_column: str | None = None):
    """A Hugging Face dataset (hub id in the local cache, or a local folder) -> Dataset.

    Rows are read one at a time until ``max_examples`` are kept; texts longer than
    ``max_chars`` characters are cut (counted in the notes). With ``local_ok=False`` only
    names shaped like a hub id are accepted, and one that is also a local path is refused
    without saying whether it exists. With ``label_column`` the kept rows' labels come along
    as a ``label`` column (as text; a class label feature gives its name)."""
    examples = Examples(max_examples, max_chars, "row(s) with an empty text")
    max_examples = examples.max_examples
    name = (name or "").strip()
    split = (split or "").strip() or "train"
    if not name:
        raise DataError("Give a Hugging Face dataset id, e.g. 'imdb'.")
    if not local_ok and (not is_hub_id(name) or os.path.lexists(name)):
        raise DataError("Give a Hugging Face dataset id such as 'imdb' or 'owner/name' "
                        "(local folders and files are not read here).")
    if not column:
        raise DataError("Give the name of the text column.")
    import datasets  # lazy: datasets takes a second to import

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
    for col in (column, pair_column, label_column):
        if col is not None and col not in cols:
            raise DataError(f"The dataset {name!r} has no column {col!r} "
                            f"(columns: {', '.join(cols)}).")
    n_total = len(ds)
    names = getattr(ds.features.get(label_column), "names", None) if label_column else None
    labels = []
    for row in ds:
        t = row[column]
        p = row[pair_column] if pair_column else None
        kept = len(examples.texts)
        examples.add(t.strip() if isinstance(t, str) else "",
                     p.strip() if isinstance(p, str) and p.strip() else None)
        if label_column and len(examples.texts) > kept:
            lab = row[label_column]
            labels.append(None if lab is None else str(names[lab] if names and isinstance(
                lab, int) and 0 <= lab < len(names) else lab).strip())
        if max_examples is not None and len(examples.texts) >= max_examples:
            break
    notes = [f"Skipped {examples.blank} row(s) with an empty text."] if examples.blank else []
    if max_examples is not None and n_total > max_examples:
        notes.append(f"Capped to the first {len(examples.texts)} of {n_total} rows.")
    if not examples.texts:
        raise DataError(f"The dataset {name!r} has no non-empty texts in column {column!r}.")
    notes += cut_note(examples.cut, examples.max_chars)
    dataset = make_dataset(examples.texts, examples.pairs, notes)
    return dataset.add_column("label", labels) if label_column else dataset
