"""Where an index's vectors go while it is built: rows written as they come, never the whole
index held twice (issue 50; docs/METHODS.md section 16, "Memory").

An index of N pieces holds float16 ``layers [L+1, N, D]`` and ``heads [L, H, N, dh]``: 9,984
bytes a piece for the embedded model, 767 MB for 300 lines at 256 tokens. Building it by
collecting each sentence's vectors in a list, joining them and joining the shards again held
three copies (5.4 GB at 512 tokens in the CLI). Here the number of pieces is known before the
first forward pass (the encodings say which pieces are kept), so the arrays are laid out once:

- :class:`RowsFile`: a ``.npy`` file of its final shape, whose rows ``lo:hi`` of every leading
  index are written with ``os.pwrite`` as each sentence's vectors come. What the process holds
  is one batch; what is written is the kernel's page cache, not the process's memory. The file
  is written under a temporary name and moved into place on :meth:`RowsFile.finish` (an index
  open elsewhere keeps reading its own, memory-mapped, files), then opened memory-mapped.
- :class:`RowsArray`: the same interface over an array in memory (a Ray worker's partial, which
  travels back as values).

:func:`write_index` then writes the rest of the folder (the pieces, the approximate indexes,
``meta.json`` last), leaving vectors already streamed there where they are; :func:`concat`
joins a cluster's shards (one shard: as it is, not copied).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from analysis.core.errors import DataError
from analysis.search.index import (EXACT_MAX_CELLS, VERSION, IndexData, SearchIndex, SetInfo,
                                   _faiss, set_name, tuned_hnsw)

DTYPE = np.float16


class RowsArray:
    """``[*lead, n, d]`` float16 in memory, filled a block of rows at a time."""

    def __init__(self, lead: tuple[int, ...], n: int, d: int):
        self.array = np.zeros((*lead, n, d), DTYPE)

    def write(self, lo: int, block: np.ndarray) -> None:
        """``block [*lead, m, d]`` into rows ``lo:lo+m``."""
        self.array[..., lo:lo + block.shape[-2], :] = block

    def finish(self) -> np.ndarray:
        return self.array


class RowsFile:
    """``[*lead, n, d]`` float16 in the ``.npy`` file ``path``, filled a block of rows at a time
    (see the module docstring)."""

    def __init__(self, path, lead: tuple[int, ...], n: int, d: int):
        self.path = Path(path)
        self.part = self.path.with_name(self.path.name + ".part")
        self.lead, self.n, self.d = tuple(int(x) for x in lead), int(n), int(d)
        shape = (*self.lead, self.n, self.d)
        with open(self.part, "wb") as fh:
            np.lib.format.write_array_header_1_0(
                fh, {"descr": np.lib.format.dtype_to_descr(np.dtype(DTYPE)),
                     "fortran_order": False, "shape": shape})
            self.offset = fh.tell()
            fh.truncate(self.offset + int(np.prod(shape, dtype=np.int64)) * DTYPE().itemsize)
        self._fd = os.open(self.part, os.O_WRONLY)
        self.row_bytes = self.d * DTYPE().itemsize

    def write(self, lo: int, block: np.ndarray) -> None:
        """``block [*lead, m, d]`` into rows ``lo:lo+m`` of every leading index."""
        block = np.asarray(block, DTYPE)
        m = block.shape[-2]
        flat = block.reshape(-1, m, self.d)
        for k in range(flat.shape[0]):
            at = self.offset + (k * self.n + lo) * self.row_bytes
            os.pwrite(self._fd, memoryview(np.ascontiguousarray(flat[k])).cast("B"), at)

    def finish(self) -> np.ndarray:
        """Moved into place and opened memory-mapped (read-only)."""
        self.close()
        os.replace(self.part, self.path)
        return np.load(self.path, mmap_mode="r")

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def discard(self) -> None:
        """A build that failed: its partial file goes."""
        self.close()
        self.part.unlink(missing_ok=True)


def rows_store(folder, name: str, lead: tuple[int, ...], n: int, d: int):
    """A :class:`RowsFile` ``folder/name`` (``folder`` given) or a :class:`RowsArray`."""
    if folder is None:
        return RowsArray(lead, n, d)
    return RowsFile(Path(folder) / name, lead, n, d)


def is_file_of(array, path) -> bool:
    """Whether ``array`` is the memory-mapped ``.npy`` file ``path`` (already where it goes)."""
    name = getattr(array, "filename", None)
    return name is not None and Path(name).resolve() == Path(path).resolve()


def _save(path: Path, array) -> None:
    """``array`` as float16 into ``path``, moved into place whole (an index open elsewhere
    keeps its memory-mapped file)."""
    part = path.with_name(path.name + ".part")
    with open(part, "wb") as fh:
        np.save(fh, np.asarray(array).astype(np.float16, copy=False))
    os.replace(part, path)


def _write_json(path: Path, payload) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(payload, fh)
    os.replace(tmp, path)


def write_index(data: IndexData, out, model: dict, fingerprint: str,
                exact_max_cells: int = EXACT_MAX_CELLS, seed: int = 0,
                progress=None) -> "SearchIndex":
    """Write ``data`` to the folder ``out`` (made if missing) with the approximate indexes of
    the sets over ``exact_max_cells``; ``model``: spec, name, hash, n_layers, n_heads.
    Returns the index opened. ``meta.json`` is written last: a folder without it is not an
    index."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if (out / "meta.json").exists():
        (out / "meta.json").unlink()
    for name, array in (("layers.npy", data.layers), ("heads.npy", data.heads)):
        if not is_file_of(array, out / name):  # else streamed there as it was built
            _save(out / name, array)
    _write_json(out / "tokens.json", {
        "tokens": data.tokens, "sentence": data.sentence.tolist(),
        "position": data.position.tolist(), "word": data.word.tolist(),
        "labels": data.labels, "numbers": list(data.numbers), "texts": data.texts,
        "pairs": data.pairs})
    sets = {}
    todo = [(layer, None) for layer in range(data.layers.shape[0])] + \
        [(layer + 1, h) for layer in range(data.heads.shape[0])
         for h in range(data.heads.shape[1])]
    for k, (layer, head) in enumerate(todo):
        vecs = data.layers[layer] if head is None else data.heads[layer - 1, head]
        name = set_name(layer, head)
        if vecs.shape[0] * vecs.shape[1] <= exact_max_cells:
            sets[name] = SetInfo("exact", 1.0).to_json()
        else:
            (out / "ann").mkdir(exist_ok=True)
            index, info = tuned_hnsw(vecs, seed)
            _faiss().write_index(index, str(out / "ann" / f"{name}.faiss"))
            sets[name] = info.to_json()
        if progress is not None:
            progress(k + 1, len(todo))
    meta = {"version": VERSION, "model": model, "fingerprint": fingerprint, "kind": data.kind,
            "label_names": list(data.label_names), "n_tokens": data.n,
            "n_sentences": len(data.texts), "n_layers": int(data.heads.shape[0]),
            "n_heads": int(data.heads.shape[1]), "hidden": int(data.layers.shape[2]),
            "head_dim": int(data.heads.shape[3]), "exact_max_cells": int(exact_max_cells),
            "sets": sets, "notes": list(data.notes)}
    _write_json(out / "meta.json", SearchIndex.SCHEMA.check(meta))
    return SearchIndex.open(out)


def concat(parts: Sequence[IndexData]) -> IndexData:
    """One :class:`IndexData` from the shards' in corpus order (sentence indexes shifted)."""
    parts = [p for p in parts if p is not None and p.n]
    if not parts:
        raise DataError("The corpus has no piece the model can read.")
    if len(parts) == 1:  # one shard (this process): as it is, its vectors not copied
        return parts[0]
    offsets = np.cumsum([0] + [len(p.texts) for p in parts[:-1]])
    first = parts[0]
    return IndexData(
        tokens=[t for p in parts for t in p.tokens],
        sentence=np.concatenate([p.sentence + o for p, o in zip(parts, offsets)]).astype(np.int32),
        position=np.concatenate([p.position for p in parts]),
        word=np.concatenate([p.word for p in parts]),
        labels={name: [v for p in parts for v in p.labels[name]] for name in first.label_names},
        numbers=[n for p in parts for n in p.numbers],
        texts=[t for p in parts for t in p.texts], pairs=[t for p in parts for t in p.pairs],
        layers=np.concatenate([p.layers for p in parts], axis=1),
        heads=np.concatenate([p.heads for p in parts], axis=2),
        kind=first.kind, label_names=first.label_names,
        notes=list(first.notes) + [n for p in parts[1:] for n in p.notes
                                   if n not in first.notes])
