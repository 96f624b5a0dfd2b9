"""The search index on disk and its nearest-neighbour search (docs/METHODS.md section 16).

What is stored (a folder): ``meta.json`` (the model's spec, name, weights hash and shape, the
corpus's fingerprint and kind, each searched set's backend and measured recall),
``tokens.json`` (every indexed piece: its sentence, position, word and labels; the
sentences), ``layers.npy`` (float16 [L+1, N, D]: every piece's hidden state at every layer,
L2-normalised, layer 0 = the embeddings) and ``heads.npy`` (float16 [L, H, N, dh]: every
head's context vector, L2-normalised), and ``ann/`` (the approximate indexes, where a set is
too large for exact search).

A *set* is one layer's hidden states or one head's context vectors. Cosine similarity is the
inner product of unit vectors, so a set of at most :data:`EXACT_MAX_CELLS` numbers (N x d) is
searched exactly with faiss's ``IndexFlatIP`` (built in memory from the float16 vectors
when first asked); a larger one with an HNSW graph over float16 vectors
(``IndexHNSWSQ``, built with the index), whose recall at k = 50 against exact search is
measured on :data:`RECALL_QUERIES` of the set's own vectors and its search breadth
(``efSearch``) raised until the recall is at least :data:`MIN_RECALL`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from analysis.core.bytecache import ByteCache
from analysis.core.errors import DataError, InputError
from analysis.core.study import Field, Schema, StudyResult

VERSION = 1
# Exact search up to this many numbers per set: 100,000 pieces x 384 numbers took 25 ms a query
# (p50; p95 39 ms) on one thread of the 2-core bench machine under a load of about 23
# (bench/README.md); the cost grows with N x d, so 200,000 x 384 stays under the 100 ms target.
EXACT_MAX_CELLS = 200_000 * 384
RECALL_K = 50
RECALL_QUERIES = 200
MIN_RECALL = 0.95
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 80
EF_SEARCH = (64, 128, 256, 512, 1024)
# The searchers kept in memory, all indexes together, oldest first out: an exact set's faiss
# index is a float32 copy of its vectors (118 MB for one layer of 300 lines at 256 tokens, where
# eight sets per index once held 0.9 GB); an HNSW graph its file's size.
SEARCHER_BYTES = 256 * 2**20
searchers = ByteCache(SEARCHER_BYTES)
MAX_K = 1000


def unit_rows(x) -> np.ndarray:
    """Rows of ``x`` scaled to length 1 (float32; a zero row stays zero)."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


@dataclass
class IndexData:
    """Everything an index holds, in memory (the corpus job's result)."""

    tokens: list[str]
    sentence: np.ndarray   # int32 [N]: index into ``numbers`` / ``texts``
    position: np.ndarray   # int32 [N]: the piece's position in its encoding ([CLS] = 0)
    word: np.ndarray       # int32 [N]: the piece's word in its sentence
    labels: dict[str, list[str]]
    numbers: list[int]     # each sentence's number (line number of a .txt file, else 0-based)
    texts: list[str]
    pairs: list[str | None]
    layers: np.ndarray     # float16 [L+1, N, D]
    heads: np.ndarray      # float16 [L, H, N, dh]
    kind: str = "text"
    label_names: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.tokens)


@dataclass
class SetInfo:
    """How one set is searched: ``exact`` or ``hnsw`` (with its efSearch and recall@50)."""

    backend: str
    recall: float | None = None
    ef_search: int | None = None

    def to_json(self) -> dict:
        return {"backend": self.backend, "recall": self.recall, "ef_search": self.ef_search}


def set_name(layer: int, head: int | None) -> str:
    return f"L{layer}" if head is None else f"L{layer}H{head}"


def exact_search(vectors, queries, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(scores, rows) [Q, k] of the ``k`` largest inner products by brute force (numpy,
    float32, in chunks): the reference the indexes are checked against."""
    q = np.atleast_2d(np.asarray(queries, np.float32))
    best_s = np.full((len(q), 0), -np.inf, np.float32)
    best_i = np.zeros((len(q), 0), np.int64)
    n = len(vectors)
    for lo in range(0, n, 65536):
        block = np.asarray(vectors[lo:lo + 65536], np.float32)
        s = q @ block.T
        s_all = np.concatenate([best_s, s], axis=1)
        i_all = np.concatenate([best_i, np.arange(lo, lo + len(block))[None].repeat(len(q), 0)],
                               axis=1)
        top = np.argsort(-s_all, axis=1, kind="stable")[:, :k]
        best_s = np.take_along_axis(s_all, top, 1)
        best_i = np.take_along_axis(i_all, top, 1)
    return best_s, best_i


def _faiss():
    # lazy: imported when used: faiss (heavy, optional)
    import faiss

    return faiss


def flat_index(vectors):
    faiss = _faiss()
    x = np.ascontiguousarray(vectors, dtype=np.float32)
    index = faiss.IndexFlatIP(x.shape[1])
    index.add(x)
    return index


def hnsw_index(vectors, seed: int = 0):
    faiss = _faiss()
    x = np.ascontiguousarray(vectors, dtype=np.float32)
    index = faiss.IndexHNSWSQ(x.shape[1], faiss.ScalarQuantizer.QT_fp16, HNSW_M,
                              faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
    index.train(x[:min(len(x), 10000)])
    index.add(x)
    return index


def recall_at(index, vectors, k: int = RECALL_K, n_queries: int = RECALL_QUERIES,
              seed: int = 0) -> float:
    """Mean share of the exact top ``k`` (numpy brute force) that ``index`` finds, over
    ``n_queries`` of the set's own vectors drawn at random (``seed``)."""
    n = len(vectors)
    k = min(k, n)
    rows = np.random.default_rng(seed).choice(n, size=min(n_queries, n), replace=False)
    q = np.asarray(vectors[np.sort(rows)], np.float32)
    _, truth = exact_search(vectors, q, k)
    _, found = index.search(q, k)
    hits = [len(set(t.tolist()) & set(f.tolist())) for t, f in zip(truth, found)]
    return float(np.mean(hits) / k)


def tuned_hnsw(vectors, seed: int = 0) -> tuple[object, SetInfo]:
    """An HNSW index of ``vectors`` with the smallest efSearch of :data:`EF_SEARCH` whose
    recall@50 is at least :data:`MIN_RECALL` (the largest when none is)."""
    index = hnsw_index(vectors, seed)
    recall = 0.0
    for ef in EF_SEARCH:
        index.hnsw.efSearch = ef
        recall = recall_at(index, vectors, seed=seed)
        if recall >= MIN_RECALL:
            break
    return index, SetInfo("hnsw", recall, ef)


@dataclass
class Match:
    """One nearest piece: its row in the index, sentence number, position, piece, cosine."""

    row: int
    sentence: int
    position: int
    token: str
    score: float
    labels: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"sentence": self.sentence, "position": self.position, "token": self.token,
                "score": round(float(self.score), 6), "labels": self.labels}


class SearchIndex(StudyResult):
    """An index folder opened for queries (vectors memory-mapped; each set's faiss index made
    when first asked and kept in :data:`searchers`, bounded by bytes across indexes). Its JSON
    is its ``meta.json`` (:data:`SCHEMA`); it reads back from its folder (:meth:`open`)."""

    SCHEMA = Schema((
        Field("version", "the index format's version"),
        Field("model", "{spec, name, hash (of the weights), n_layers, n_heads, max_length}"),
        Field("fingerprint", "the corpus's fingerprint"),
        Field("kind", "'treebank', 'absa' or 'text'"),
        Field("label_names", "the pieces' labels (upos, deprel, role, label)"),
        Field("n_tokens", "pieces indexed (special tokens left out)"),
        Field("n_sentences", "sentences indexed"),
        Field("n_layers", "layers (the hidden states have one more: 0 = the embeddings)"),
        Field("n_heads", "heads per layer"),
        Field("hidden", "numbers per hidden state"),
        Field("head_dim", "numbers per head's context vector"),
        Field("exact_max_cells", "sets of at most this many numbers are searched exactly"),
        Field("sets", "set ('L3', 'L3H2': layer 3, its head 2, 0-based) -> {backend: exact "
                      "or hnsw, recall: recall@50 against exact search, ef_search}"),
        Field("notes", "what was skipped or cut"),
    ))

    def json_fields(self) -> dict:
        return dict(self.meta)

    @classmethod
    def from_json(cls, data: dict):
        raise TypeError("An index is its folder: open it with SearchIndex.open(folder); its "
                        "meta.json alone holds no vectors.")

    def __init__(self, folder: Path, meta: dict, rows: dict):
        self.folder = folder
        self.meta = meta
        self.tokens: list[str] = rows["tokens"]
        self.sentence = np.asarray(rows["sentence"], np.int32)
        self.position = np.asarray(rows["position"], np.int32)
        self.word = np.asarray(rows["word"], np.int32)
        self.labels: dict[str, list[str]] = rows["labels"]
        self.numbers: list[int] = rows["numbers"]
        self.texts: list[str] = rows["texts"]
        self.pairs: list[str | None] = rows["pairs"]
        self.layers = np.load(folder / "layers.npy", mmap_mode="r")
        self.heads = np.load(folder / "heads.npy", mmap_mode="r")

    @classmethod
    def open(cls, folder) -> "SearchIndex":
        folder = Path(folder).expanduser()
        meta_path = folder / "meta.json"
        if not folder.is_dir():
            raise InputError(f"The index folder {folder} does not exist.")
        if not meta_path.is_file():
            raise DataError(f"{folder} holds no search index (meta.json is missing); build one "
                            "with `python -m analysis search index`.")
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            rows = json.loads((folder / "tokens.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise DataError(f"The search index in {folder} cannot be read ({exc}).") from None
        if meta.get("version") != VERSION:
            raise DataError(f"The search index in {folder} was built by another version of "
                            "this project; build it again.")
        return cls(folder, meta, rows)

    # -- shape
    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def n_layers(self) -> int:
        return int(self.meta["n_layers"])

    @property
    def n_heads(self) -> int:
        return int(self.meta["n_heads"])

    @property
    def label_names(self) -> list[str]:
        return list(self.meta.get("label_names") or [])

    def check_set(self, layer: int, head: int | None = None) -> None:
        """InputError (one line) for a layer or head outside the model."""
        if not 0 <= int(layer) <= self.n_layers:
            raise InputError(f"The layer must be from 0 (the embeddings) to {self.n_layers}, "
                             f"not {layer}.")
        if head is not None:
            if int(layer) == 0:
                raise InputError("Layer 0 (the embeddings) has no heads: pick a layer from 1 "
                                 f"to {self.n_layers} for a head's context vectors.")
            if not 0 <= int(head) < self.n_heads:
                raise InputError(f"The head must be from 1 to {self.n_heads}, not "
                                 f"{int(head) + 1}.")

    def vectors(self, layer: int, head: int | None = None):
        """The set's float16 unit vectors [N, d] (memory-mapped); ``head`` 0-based."""
        self.check_set(layer, head)
        return self.layers[layer] if head is None else self.heads[layer - 1, head]

    def info(self, layer: int, head: int | None = None) -> SetInfo:
        s = self.meta["sets"][set_name(layer, head)]
        return SetInfo(s["backend"], s.get("recall"), s.get("ef_search"))

    def searcher_key(self, layer: int, head: int | None = None) -> tuple:
        """The set's key in :data:`searchers` (folder, corpus fingerprint, pieces, set)."""
        return (str(self.folder), self.meta.get("fingerprint"), self.n, set_name(layer, head))

    def searcher(self, layer: int, head: int | None = None):
        """The set's faiss index, made once and kept while :data:`searchers` has room."""
        info = self.info(layer, head)
        name = set_name(layer, head)

        def make():
            if info.backend == "exact":
                return flat_index(self.vectors(layer, head))
            index = _faiss().read_index(str(self.folder / "ann" / f"{name}.faiss"))
            index.hnsw.efSearch = int(info.ef_search or EF_SEARCH[-1])
            return index

        def size(index) -> int:
            if info.backend == "exact":
                n, d = self.vectors(layer, head).shape
                return n * d * 4
            return (self.folder / "ann" / f"{name}.faiss").stat().st_size

        return searchers.get_or_make(self.searcher_key(layer, head), make, size=size)

    def search(self, vector, layer: int, head: int | None = None, k: int = 20) -> list[Match]:
        """The ``k`` pieces whose set vectors are closest (cosine) to ``vector``, best first."""
        k = check_k(k, self.n)
        q = unit_rows(np.asarray(vector, np.float32).reshape(1, -1))
        d = self.vectors(layer, head).shape[1]
        if q.shape[1] != d:
            raise InputError(f"The query vector has {q.shape[1]} numbers; this set holds "
                             f"vectors of {d}.")
        scores, rows = self.searcher(layer, head).search(q, k)
        return [self.match(int(r), float(s)) for s, r in zip(scores[0], rows[0]) if r >= 0]

    def match(self, row: int, score: float) -> Match:
        return Match(row, int(self.numbers[self.sentence[row]]), int(self.position[row]),
                     self.tokens[row], score,
                     {name: self.labels[name][row] for name in self.label_names})

    # -- what the page shows of a match
    def rows_of_sentence(self, s: int) -> range:
        """The rows of sentence ``s`` (its index in ``texts``; contiguous)."""
        lo = int(np.searchsorted(self.sentence, s, "left"))
        hi = int(np.searchsorted(self.sentence, s, "right"))
        return range(lo, hi)

    def rows_of(self, row: int) -> range:
        """The rows of the piece's sentence."""
        return self.rows_of_sentence(int(self.sentence[row]))

    def context(self, row: int, window: int = 8) -> tuple[str, str, str]:
        """(text before, the piece's word, text after) in its sentence, at most ``window``
        words on each side, pieces of one word joined ("##" dropped)."""
        rows = self.rows_of(row)
        words: list[list[int]] = []
        for r in rows:
            if words and self.word[words[-1][-1]] == self.word[r]:
                words[-1].append(r)
            else:
                words.append([r])
        k = next(i for i, w in enumerate(words) if row in w)

        def text(w):
            return "".join(piece_text(self.tokens[r], j) for j, r in enumerate(w))

        lo, hi = max(0, k - window), min(len(words), k + window + 1)
        before = ("... " if lo > 0 else "") + " ".join(text(w) for w in words[lo:k])
        after = " ".join(text(w) for w in words[k + 1:hi]) + (" ..." if hi < len(words) else "")
        return before, text(words[k]), after

    def label_rates(self) -> dict[str, dict[str, float]]:
        """Each label name -> each label's share of the indexed pieces (the chance rate)."""
        out = {}
        for name in self.label_names:
            values, counts = np.unique(np.asarray(self.labels[name]), return_counts=True)
            out[name] = {str(v): float(c) / self.n for v, c in zip(values, counts)}
        return out

    def size_bytes(self) -> int:
        return sum(f.stat().st_size for f in self.folder.rglob("*") if f.is_file())


def piece_text(token: str, j: int) -> str:
    """A piece as it reads inside its word: WordPiece's "##" dropped after the first piece."""
    return token[2:] if j and token.startswith("##") else token


def check_k(k, n: int) -> int:
    try:
        k = int(k)
    except (TypeError, ValueError):
        raise InputError(f"k must be a whole number, not {k!r}.") from None
    if not 1 <= k <= MAX_K:
        raise InputError(f"k must be from 1 to {MAX_K}, not {k}.")
    return min(k, n)
