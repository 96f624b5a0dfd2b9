"""Structural probes (Hewitt & Manning 2019; docs/METHODS.md section 10, "Structural probes").

- Distance probe: a rank-k map B [k, D] with ``||B(h_i - h_j)||^2`` trained towards the tree
  distance of words i and j; loss per sentence ``sum_ij |pred - dist| / n^2``.
- Depth probe: ``||B h_i||^2`` towards the depth of word i; loss per sentence
  ``sum_i |pred - depth| / n``.

Both: B initialised uniform in [-0.05, 0.05] from ``torch.Generator().manual_seed(seed)``;
Adam (lr 0.01) on batches of 20 sentences (:func:`analysis.core.batching.batches` in training mode,
``random.Random(seed)``), batch loss = mean of its sentences' losses; after every epoch the mean
loss on the stopping sentences (every 10th training sentence, held out) decides: better by more
than 1e-4 keeps B, otherwise the learning rate is multiplied by ``decay`` (0.1), and training
stops after ``patience`` (2) such epochs in a row or ``max_epochs`` (40); the best B is
returned. Training is :func:`analysis.syntax.layered.train_layers`: every layer's probe of one
kind in one loop (the same batches and start for every layer), each on one torch thread
(:func:`torch_threads`); :func:`probe_layers` trains the distance and the depth probes of every
layer side by side on two threads (:func:`probe_workers`), with the same numbers as one probe
at a time.

:func:`probe_layers` extracts the word vectors of both files in one pass
(:func:`analysis.syntax.states.extract_split_states`), trains both probes on every layer
(embeddings included) and evaluates them on the other file.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from analysis.core.errors import InputError
from analysis.core.execution.threads import side_by_side
from analysis.core.study import Field, Schema, StudyResult
from analysis.syntax.layered import train_layers
from analysis.syntax.states import WordStates, extract_split_states, extract_word_states
from analysis.syntax.trees import (corpus_uuas, depth_spearman, distance_spearman, gold_edges,
                                   linear_chain_uuas, mst_edges, non_punct, root_accuracy,
                                   row_spearman, sentence_uuas_counts, tree_depths,
                                   tree_distances, uuas)

__all__ = ["Probe", "ProbeResult", "WordStates", "corpus_uuas", "depth_spearman",
           "distance_spearman", "evaluate_layer", "example_tree", "extract_word_states",
           "gold_edges", "linear_chain_uuas", "mst_edges", "non_punct", "probe_layers",
           "root_accuracy", "row_spearman", "sentence_uuas_counts", "split_treebank",
           "torch_threads", "train_depth_probe", "train_distance_probe", "tree_depths",
           "tree_distances", "uuas"]

LR = 1e-2
DECAY = 0.1
BATCH = 20
MAX_EPOCHS = 40
PATIENCE = 2
INIT = 0.05
TRAIN_THREADS = 1
_THREADS = {"lock": threading.Lock(), "users": 0, "saved": None}


MAX_RANK = 4096  # a probe's rows: above every encoder's vector size (k > D adds nothing), and
                 # its map, gradients and optimiser state stay a few hundred MB at most


@contextlib.contextmanager
def torch_threads(n: int | None = TRAIN_THREADS):
    """Run the block with ``n`` torch intra-op threads (None: unchanged) and restore the
    previous number when the last concurrent user leaves. Probe batches are small: on a busy
    machine more threads mostly wait on each other (bench/studies/syntax.py)."""
    # lazy: imported when used: torch (heavy)
    import torch

    if n is None:
        yield
        return
    with _THREADS["lock"]:
        if _THREADS["users"] == 0:
            _THREADS["saved"] = torch.get_num_threads()
            torch.set_num_threads(int(n))
        _THREADS["users"] += 1
    try:
        yield
    finally:
        with _THREADS["lock"]:
            _THREADS["users"] -= 1
            if _THREADS["users"] == 0:
                torch.set_num_threads(_THREADS["saved"])


def probe_workers(threads: int | None = TRAIN_THREADS) -> int:
    """How many probes train at once: the threads torch may use in this process (a job's
    process sets them) divided by each probe's ``threads``."""
    # lazy: imported when used: torch (heavy)
    import torch

    if threads is None:  # each probe on every thread: one at a time
        return 1
    return max(1, int(torch.get_num_threads()) // max(1, int(threads)))


@dataclass
class Probe:
    """A trained probe: ``B`` [k, D]; ``kind`` is "distance" or "depth"."""

    B: np.ndarray
    kind: str
    epochs: int = 0
    stop_loss: float = float("nan")
    seconds: float = 0.0

    def distances(self, X, bt: np.ndarray | None = None) -> np.ndarray:
        """[n, n] predicted squared distances ``||B(h_i - h_j)||^2`` of word vectors X [n, D]
        (``bt``: ``B.T`` in float64, when the caller made it once for many sentences)."""
        Y = np.asarray(X, dtype=np.float64) @ (self.B.T.astype(np.float64) if bt is None else bt)
        diff = Y[:, None, :] - Y[None, :, :]
        return (diff ** 2).sum(-1)

    def depths(self, X, bt: np.ndarray | None = None) -> np.ndarray:
        """[n] predicted squared norms ``||B h_i||^2`` (``bt`` as :meth:`distances`)."""
        Y = np.asarray(X, dtype=np.float64) @ (self.B.T.astype(np.float64) if bt is None else bt)
        return (Y ** 2).sum(-1)


def _train(vectors, targets, kind: str, *, rank: int, seed: int, max_epochs: int,
           patience: int, lr: float, batch_size: int, decay: float = DECAY,
           threads: int | None = TRAIN_THREADS) -> Probe:
    """One probe: :func:`analysis.syntax.layered.train_layers` with one layer."""
    if not len(vectors):
        raise InputError("No training sentence for the probe.")
    lengths = [np.asarray(v).shape[0] for v in vectors]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    flat = np.concatenate([np.asarray(v, dtype=np.float32) for v in vectors])
    with torch_threads(threads):
        got = train_layers([flat], offsets, targets, kind, rank=rank, seed=seed,
                           max_epochs=max_epochs, patience=patience, lr=lr,
                           batch_size=batch_size, decay=decay)[0]
    return Probe(got.B, kind, got.epochs, got.stop_loss, got.seconds)


def _options(options: dict) -> dict:
    opts = dict(max_epochs=MAX_EPOCHS, patience=PATIENCE, lr=LR, batch_size=BATCH, decay=DECAY,
                threads=TRAIN_THREADS)
    unknown = set(options) - set(opts)
    if unknown:
        raise TypeError(f"Unknown probe option(s): {sorted(unknown)}")
    opts.update({k: v for k, v in options.items() if v is not None or k == "threads"})
    return opts


def train_distance_probe(vectors, heads_list, *, rank: int = 64, seed: int = 0,
                         **options) -> Probe:
    """Train a distance probe on word vectors (a list of [n, D]) and their trees; options:
    ``max_epochs``, ``patience``, ``lr``, ``batch_size``, ``decay``, ``threads``."""
    return _train(vectors, [tree_distances(h) for h in heads_list], "distance", rank=rank,
                  seed=seed, **_options(options))


def train_depth_probe(vectors, heads_list, *, rank: int = 64, seed: int = 0,
                      **options) -> Probe:
    """Train a depth probe on word vectors (a list of [n, D]) and their trees (options as
    :func:`train_distance_probe`)."""
    return _train(vectors, [tree_depths(h) for h in heads_list], "depth", rank=rank,
                  seed=seed, **_options(options))


def evaluate_layer(dist: Probe, depth: Probe, vectors, heads_list, upos_list,
                   gold_distances=None) -> dict:
    """UUAS, DSpr, root accuracy and depth Spearman of two probes on sentences, with the
    predicted MST edges per sentence (``"edges"``); ``gold_distances``: the sentences' tree
    distances when already computed (every layer shares them)."""
    correct = total = 0
    pred_d, pred_depth, edges = [], [], []
    bt_dist, bt_depth = dist.B.T.astype(np.float64), depth.B.T.astype(np.float64)
    for X, h, u in zip(vectors, heads_list, upos_list):
        D = dist.distances(X, bt_dist)
        c, t, pred, _ = sentence_uuas_counts(D, h, u)
        correct, total = correct + c, total + t
        edges.append(pred)
        pred_d.append(D)
        pred_depth.append(depth.depths(X, bt_depth))
    gold_d = gold_distances if gold_distances is not None else [tree_distances(h)
                                                                 for h in heads_list]
    return {"uuas": correct / total if total else float("nan"),
            "dspr": distance_spearman(pred_d, gold_d),
            "root_acc": root_accuracy(pred_depth, heads_list, upos_list),
            "depth_spearman": depth_spearman(pred_depth, heads_list), "edges": edges}


@dataclass
class ProbeResult(StudyResult):
    """Probe metrics per layer (layer 0 = embeddings) on the evaluation sentences; its JSON
    (the ``probe`` command's, the page's download): :data:`SCHEMA`."""

    SCHEMA = Schema((
        Field("layers", "per layer (0 = the embeddings): {layer, uuas, dspr, root_acc, "
                        "depth_spearman} on the evaluation sentences (null: not measurable)"),
        Field("baselines", "{linear_chain_uuas, ...}: the scores of trees that read no vector"),
    ))

    layers: list[dict]
    baselines: dict
    model: str = ""
    rank: int = 64
    seed: int = 0
    n_train: int = 0
    n_eval: int = 0
    skipped_train: int = 0
    skipped_eval: int = 0
    eval_words: list[list[str]] = field(default_factory=list)
    eval_heads: list[list[int]] = field(default_factory=list)
    eval_upos: list[list[str]] = field(default_factory=list)
    pred_edges: list[list[list]] = field(default_factory=list)  # [layer][sentence] edges
    probes: list[tuple[Probe, Probe]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds_extract: float = 0.0
    seconds_train: float = 0.0

    def json_fields(self) -> dict:
        keys = ("layer", "uuas", "dspr", "root_acc", "depth_spearman")
        return {"layers": [{k: (int(r[k]) if k == "layer" else _num(r[k])) for k in keys}
                           for r in self.layers],
                "baselines": {k: _num(v) for k, v in self.baselines.items()}}

    @classmethod
    def from_json(cls, data: dict) -> "ProbeResult":
        """The metrics back from their JSON (null: NaN; no sentences, no probes)."""
        cls.SCHEMA.check(data)

        def num(x):
            return float("nan") if x is None else x

        return cls([{k: (v if k == "layer" else num(v)) for k, v in r.items()}
                    for r in data["layers"]],
                   {k: num(v) for k, v in data["baselines"].items()})


def _num(x):
    x = float(x)
    return None if np.isnan(x) else x


def split_treebank(dataset, eval_share: float = 0.25):
    """(train, eval): the first ``1 - eval_share`` of the sentences and the rest (at least
    one sentence each); raises InputError for fewer than two sentences."""
    n = len(dataset)
    if n < 2:
        raise InputError("The treebank needs at least two sentences to split into training "
                         "and evaluation sentences.")
    n_eval = min(n - 1, max(1, int(round(n * eval_share))))
    return dataset.select(range(n - n_eval)), dataset.select(range(n - n_eval, n))


def _train_and_evaluate(train_states: WordStates, eval_states: WordStates, layer_ids, *,
                        rank: int, seed: int, max_epochs: int, threads: int | None,
                        ran: Callable[[int], None]):
    """The distance and depth probes of ``layer_ids`` trained on ``train_states`` and evaluated
    on ``eval_states``: (rows, edges, probes) in layer order; ``ran(n)`` after each run of n
    layers' probes of one kind."""
    rows, edges, probes = [], [], []
    opts = _options(dict(max_epochs=max_epochs))
    opts.pop("threads")
    targets = {"distance": [tree_distances(h) for h in train_states.heads],
               "depth": [tree_depths(h) for h in train_states.heads]}
    workers = probe_workers(threads)
    # each kind's layers in as many runs as there are workers (the depth probes first: they
    # run longer), so that the workers stay busy to the end; a distance run then evaluates
    # its layers (their depth run is done or running: it started earlier), while the other
    # runs may still train
    parts = [[int(x) for x in part] for part in
             np.array_split(np.asarray(layer_ids), min(workers, len(layer_ids))) if len(part)]
    runs = [(kind, i) for kind in ("depth", "distance") for i in range(len(parts))]
    depth_of: dict[int, list] = {}
    depth_done = [threading.Event() for _ in parts]
    gold = [tree_distances(h) for h in eval_states.heads]
    # lazy: imported when used: torch (heavy)
    import torch

    def evaluate(layer, dist_t, depth_t):
        dist, depth = (Probe(t.B, kind, t.epochs, t.stop_loss, t.seconds)
                       for kind, t in (("distance", dist_t), ("depth", depth_t)))
        return dist, depth, evaluate_layer(dist, depth, eval_states.sentences(layer),
                                           eval_states.heads, eval_states.upos, gold)

    def train(run):
        kind, i = run
        part = parts[i]
        if threads is not None:
            torch.set_num_threads(int(threads))  # this pool thread's own count
        try:
            got = train_layers([train_states.layers[layer] for layer in part],
                               train_states.offsets, targets[kind], kind, rank=rank,
                               seed=seed, **opts)
            if kind == "depth":
                depth_of[i] = got
                return got, []
        finally:
            if kind == "depth":
                depth_done[i].set()  # also when it failed: the distance run must not wait
        depth_done[i].wait()
        if i not in depth_of:
            raise RuntimeError("The depth probes of these layers were not trained.")
        return got, [evaluate(layer, d, t) for layer, d, t in zip(part, got, depth_of[i])]

    # the runs are independent and each deterministic (every layer's probe starts from the
    # same generator and sees the same batches, ``threads`` torch threads): they train side by
    # side on probe_workers() threads (torch releases the GIL in its kernels) and come back in
    # order, so the numbers are those of one probe at a time (when the caller stops, the runs
    # not started are dropped: side_by_side starts them in order, every depth run before any
    # distance run, which is why a distance run may wait for its depth run)
    saved = torch.get_num_threads()
    evaluated = {}
    try:
        with side_by_side(train, runs, workers) as done:
            for kind, i in runs:
                _, evs = next(done)
                evaluated.update(zip(parts[i], evs))
                ran(len(parts[i]))
    finally:
        torch.set_num_threads(saved)  # threads started later take this count again
    for layer in layer_ids:
        dist, depth, ev = evaluated[layer]
        edges.append(ev.pop("edges"))
        rows.append({"layer": layer, **ev})
        probes.append((dist, depth))
    return rows, edges, probes


def probe_layers(loaded, train_ds, eval_ds=None, *, rank: int = 64, seed: int = 0,
                 max_sentences: int | None = None,
                 progress: Callable[[int, int], None] | None = None, batch_size: int = 32,
                 max_epochs: int = MAX_EPOCHS, layers=None, eval_share: float = 0.25,
                 threads: int | None = TRAIN_THREADS,
                 train_states: WordStates | None = None,
                 eval_states: WordStates | None = None) -> ProbeResult:
    """Train distance and depth probes on ``train_ds`` for every layer and evaluate them on
    ``eval_ds`` (when None, the last ``eval_share`` of ``train_ds``). ``max_sentences`` caps
    each of the two sets; ``progress(done, total)`` counts extracted sentences and trained
    probes."""
    if not 1 <= int(rank) <= MAX_RANK:
        raise InputError(f"The probe rank must be from 1 to {MAX_RANK:,}, not {int(rank):,}.")
    if eval_ds is None and eval_states is None:
        train_ds, eval_ds = split_treebank(train_ds, eval_share)
    n_tr = len(train_states.offsets) - 1 if train_states is not None else (
        min(len(train_ds), max_sentences or len(train_ds)))
    n_ev = len(eval_states.offsets) - 1 if eval_states is not None else (
        min(len(eval_ds), max_sentences or len(eval_ds)))
    n_layers = loaded.n_layers + 1
    layer_ids = list(range(n_layers)) if layers is None else [int(x) for x in layers]
    total = n_tr + n_ev + 2 * len(layer_ids) * max(1, (n_tr + n_ev) // 20)
    step = max(1, (n_tr + n_ev) // 20)
    state = {"base": 0}

    def tick(done, _total=None):
        if progress is not None:
            progress(min(total, state["base"] + done), total)

    t0 = time.perf_counter()
    if train_states is None and eval_states is None:  # both in one pass: fuller batches
        train_states, eval_states = extract_split_states(
            loaded, train_ds, eval_ds, max_sentences=max_sentences, batch_size=batch_size,
            progress=tick)
    if train_states is None:
        train_states = extract_word_states(loaded, train_ds, max_sentences=max_sentences,
                                           batch_size=batch_size, progress=tick)
    state["base"] = n_tr
    if eval_states is None:
        eval_states = extract_word_states(loaded, eval_ds, max_sentences=max_sentences,
                                          batch_size=batch_size, progress=tick)
    state["base"] = n_tr + n_ev
    t_extract = time.perf_counter() - t0
    def ran(n_layers):  # a run of n_layers' probes of one kind trained
        state["base"] += step * n_layers
        tick(0)

    rows, edges, probes = _train_and_evaluate(train_states, eval_states, layer_ids,
                                              rank=int(rank), seed=seed,
                                              max_epochs=max_epochs, threads=threads, ran=ran)
    notes = [f"Training: {n}" for n in train_states.notes] + [
        f"Evaluation: {n}" for n in eval_states.notes]
    return ProbeResult(
        layers=rows, baselines={"linear_chain_uuas": linear_chain_uuas(eval_states.heads,
                                                                       eval_states.upos)},
        model=loaded.spec, rank=int(rank), seed=int(seed),
        n_train=train_states.n_sentences, n_eval=eval_states.n_sentences,
        skipped_train=train_states.skipped, skipped_eval=eval_states.skipped,
        eval_words=list(eval_states.words), eval_heads=list(eval_states.heads),
        eval_upos=list(eval_states.upos), pred_edges=edges, probes=probes, notes=notes,
        seconds_extract=t_extract, seconds_train=time.perf_counter() - t0 - t_extract)


def example_tree(result: ProbeResult, sentence_index: int, layer: int):
    """(predicted edges, gold edges, words) of evaluation sentence ``sentence_index`` at
    ``layer`` (a layer number of the result, 0 = embeddings): the probe's MST over the
    non-punctuation words and the gold edges among them, as 0-based (i, j) pairs, i < j."""
    pos = [r["layer"] for r in result.layers]
    if layer not in pos:
        raise InputError(f"Layer {layer} was not probed (layers: {pos}).")
    if not 0 <= sentence_index < len(result.eval_words):
        raise InputError(f"There is no evaluation sentence {sentence_index}.")
    heads, upos = result.eval_heads[sentence_index], result.eval_upos[sentence_index]
    gold = sorted(gold_edges(heads, non_punct(upos)))
    return (list(result.pred_edges[pos.index(layer)][sentence_index]), gold,
            list(result.eval_words[sentence_index]))
