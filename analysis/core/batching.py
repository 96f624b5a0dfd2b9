"""Batches: which examples go through the model together, and the padded tensors for them.

One batcher (:func:`batches`) serves every study:

- inference (the default): examples sorted by length, longest first (ties in input order),
  cut into groups of ``batch_size`` and one smaller group where it pads the fewest tokens
  (:func:`_cut`); with ``bytes_per_token_pair`` a group also stops growing before its padded
  attention maps would pass ``max_batch_mb`` (long inputs get smaller batches; one example
  always forms a batch);
- ``ascending=True``: the same, shortest first;
- training (``rng`` given): shuffled, cut into chunks of ``batch_size * bucket_factor``, each
  chunk sorted by length and batched, then the batch order shuffled: little padding, still
  random.

:func:`collate` pads a group of :class:`analysis.core.encoding.Encoding` into model inputs. Padding
never changes a real token's numbers: every map is cropped to the example's own length
(docs/METHODS.md section 1), so a batch gives what one example at a time gives.
"""

from __future__ import annotations

import ctypes
import gc
import os
import random
from typing import Sequence

import numpy as np


def batches(lengths: Sequence[int], batch_size: int, *, ascending: bool = False,
            bytes_per_token_pair: int = 0, max_batch_mb: float = 256.0,
            rng: random.Random | None = None, bucket_factor: int = 50) -> list[list[int]]:
    """Indices into ``lengths`` grouped into batches (see the module docstring)."""
    batch_size = max(1, int(batch_size))
    if rng is not None:
        order = list(range(len(lengths)))
        rng.shuffle(order)
        chunk = max(batch_size, batch_size * bucket_factor)
        out = []
        for k in range(0, len(order), chunk):
            part = sorted(order[k:k + chunk], key=lambda i: lengths[i])
            out += [part[j:j + batch_size] for j in range(0, len(part), batch_size)]
        rng.shuffle(out)
        return out
    if ascending:
        order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    else:
        order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    if not bytes_per_token_pair:
        return _cut(order, [lengths[i] for i in order], batch_size)
    budget = max_batch_mb * 2 ** 20
    out, cur = [], []
    for i in order:
        n_max = lengths[cur[0]] if cur else lengths[i]
        if cur and (len(cur) >= batch_size
                    or (len(cur) + 1) * n_max * n_max * bytes_per_token_pair > budget):
            out.append(cur)
            cur = []
        cur.append(i)
    if cur:
        out.append(cur)
    return out


def _cut(order: list[int], sizes: list[int], batch_size: int) -> list[list[int]]:
    """``order`` (sorted by length) cut into full groups of ``batch_size`` and one smaller
    group (the remainder), placed where the groups pad the fewest tokens (each group pads to
    its longest); the remainder last where that ties. 500 EWT sentences in batches of 32,
    longest first: 11,400 padded tokens with the 20 longest together against 11,920 with the
    20 shortest."""
    n, b = len(order), batch_size
    r = n % b
    if not r or n < b:
        return [order[k:k + b] for k in range(0, n, b)]
    k = n // b  # full groups; the remainder sits before full group j (j = 0 .. k)
    sz = np.asarray(sizes, dtype=np.int64)
    full = np.array([sz[i * b:(i + 1) * b].max() for i in range(k)])  # no shift
    shifted = np.array([sz[r + i * b:r + (i + 1) * b].max() for i in range(k)])
    before = np.concatenate([[0], np.cumsum(full)])          # groups 0 .. j-1 unshifted
    after = np.concatenate([np.cumsum(shifted[::-1])[::-1], [0]])  # groups j .. k-1 shifted
    rest = np.array([sz[j * b:j * b + r].max() for j in range(k + 1)])
    cost = b * before + r * rest + b * after
    j = int(np.flatnonzero(cost == cost.min())[-1])
    cuts = [i * b for i in range(j + 1)] + [j * b + r + i * b for i in range(k - j)]
    return [order[c:c2] for c, c2 in zip(cuts, cuts[1:] + [n])]


# glibc's mallopt parameters (malloc.h)
M_MMAP_THRESHOLD, M_ARENA_MAX = -3, -8
MMAP_THRESHOLD = 4 * 2**20  # blocks from 4 MiB up are mapped on their own, unmapped when freed
ARENA_MAX = 2               # malloc arenas (one per core): each keeps the holes its threads left


def bound_malloc() -> bool:
    """glibc's allocator told to give memory back as it is freed (issue 50: a server stayed at
    3.3 GB after an attack, against 0.56 GB fresh): a fixed mmap threshold
    (:data:`MMAP_THRESHOLD`; by default glibc raises it to 32 MiB after each large block is
    freed, so later batches come from heaps it rarely shrinks) and at most :data:`ARENA_MAX`
    arenas (by default one per thread up to 8 per core, each keeping its holes: every queued
    job runs in a new thread); and Arrow's buffers taken from that allocator too
    (:func:`arrow_on_system`). For a long-running process (the server calls it once per
    start). False where there is no glibc (macOS, musl)."""
    arrow_on_system()
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
            bool(libc.mallopt(M_ARENA_MAX, ARENA_MAX))
    except (OSError, AttributeError):
        return False


def arrow_on_system() -> str | None:
    """Arrow's buffers (the corpora's tables, the tables Streamlit sends to the browser) from
    the system's allocator, whose freed blocks :func:`release_memory` hands back, instead of
    pyarrow's bundled mimalloc, which keeps a 1 GiB reservation's freed pages resident: after
    a Drift attack the server held 143 MB there with none of it in use (issue 50). Both of
    pyarrow's defaults: the one its Python calls use (``set_memory_pool``) and, through
    ``ARROW_DEFAULT_MEMORY_POOL``, the C++ one where it is not made yet. The pool's backend name
    (None without pyarrow)."""
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    try:
        import pyarrow  # lazy: imported when used: pyarrow (heavy; the server has it already)
    except ImportError:
        return None
    pool = pyarrow.system_memory_pool()
    pyarrow.set_memory_pool(pool)
    return pool.backend_name


def release_memory() -> None:
    """Hand the memory a finished job's batches freed back to the system: a full garbage
    collection, then glibc's ``malloc_trim``. Without it the freed blocks of a job's large
    batches stay in the process (glibc raises its mmap threshold each time a large block is
    freed, so the next ones come from a heap it rarely shrinks): the server's memory stayed
    at its peak after one Drift job. A no-op where there is no glibc."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to trim
        pass


def collate(tokenizer, encodings: Sequence, device=None) -> dict:
    """Padded ``input_ids``, ``attention_mask`` (and ``token_type_ids`` where the model takes
    them) for a group of encodings, on ``device``."""
    import torch  # lazy: torch takes seconds to import; the CLI checks its input first

    n = max(e.n_tokens for e in encodings)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    ids = torch.full((len(encodings), n), pad, dtype=torch.long)
    mask = torch.zeros((len(encodings), n), dtype=torch.long)
    use_tt = "token_type_ids" in getattr(tokenizer, "model_input_names", []) and all(
        e.token_type_ids is not None for e in encodings
    )
    tt = torch.zeros((len(encodings), n), dtype=torch.long) if use_tt else None
    for b, e in enumerate(encodings):
        ids[b, : e.n_tokens] = torch.tensor(e.input_ids)
        mask[b, : e.n_tokens] = 1
        if use_tt:
            tt[b, : e.n_tokens] = torch.tensor(e.token_type_ids)
    batch = {"input_ids": ids, "attention_mask": mask}
    if use_tt:
        batch["token_type_ids"] = tt
    if device is not None:
        batch = {k: v.to(device) for k, v in batch.items()}
    return batch


def pad_features(tokenizer, features: dict, idx: Sequence[int]) -> dict:
    """Padded tensors for rows ``idx`` of a tokenizer's output over many examples (the ABSA
    pair classifiers tokenise their pairs with the tokenizer's own truncation)."""
    return tokenizer.pad([{k: features[k][i] for k in features.keys()} for i in idx],
                         return_tensors="pt")
