"""Building an index as a map/merge corpus job (:mod:`analysis.core.execution.corpus`), the cache
folder of an index (corpus fingerprint x model weights), and the query vector of one piece of a text
(docs/METHODS.md section 16).

``map`` runs one shard's sentences through the one batched forward path (hidden states of
every layer, the heads' context vectors captured at each attention output projection) and
keeps every piece that is not a special token, its vectors L2-normalised and stored as
float16; ``merge`` puts the shards back in corpus order. Ray runs the same job
(:mod:`analysis.core.execution.raydata`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence
import os
import re
import shutil
import uuid

import numpy as np

from analysis.core.cost import lengths_of
from analysis.core.encoding import encode
from analysis.core.errors import DataError, InputError
from analysis.core.execution.child import process_alive
from analysis.core.forward import forward, forward_batches
from analysis.search.corpus import SearchCorpus, search_corpus
from analysis.search.index import EXACT_MAX_CELLS, IndexData, SearchIndex, unit_rows
from analysis.search.store import concat, rows_store, write_index
from analysis.core.example import cache_root
from analysis.core.models import load_model
from analysis.report.provenance import model_weights_hash

Progress = Callable[[int, int], None]
CACHE_FOLDER = "search"
# A batch's hidden states and context vectors (float32) at most; the forward's own temporaries
# come on top (the CLI on 60 lines of ~430 tokens: 1.65 GB peak with batches of 32, 0.92 GB
# with 8, the same CPU time; the process alone with the model: 0.55 GB).
BATCH_BYTES = 64 * 2**20


def model_info(loaded) -> dict:
    """What an index records of its model (the weights hash decides whether a query's model
    is the index's)."""
    return {"spec": loaded.spec, "name": loaded.name, "hash": model_weights_hash(loaded.model),
            "n_layers": loaded.n_layers, "n_heads": loaded.n_heads,
            "max_length": loaded.max_length}


def _vectors(fw, b: int, keep: np.ndarray, n_heads: int) -> tuple[np.ndarray, np.ndarray]:
    """(hidden [L+1, n, D], context [L, H, n, dh]) of example ``b``'s kept pieces, unit rows,
    float16."""
    hidden = unit_rows(fw.hidden(b)[:, keep])
    n = fw.lengths[b]
    ctx = np.stack([c[b, :n].float().numpy() for c in fw.captured["context"]])[:, keep]
    L, m, D = ctx.shape
    ctx = unit_rows(ctx.reshape(L, m, n_heads, D // n_heads).transpose(0, 2, 1, 3))
    return hidden.astype(np.float16), ctx.astype(np.float16)


def hidden_size(loaded) -> int:
    config = getattr(loaded.model, "config", None)
    size = getattr(config, "hidden_size", None) or getattr(config, "dim", None)
    if not size:
        raise DataError(f"{loaded.name}: its config names no hidden size.")
    return int(size)


def index_data(loaded, corpus: SearchCorpus, batch_size: int = 32,
               progress: Progress | None = None, out=None) -> IndexData | None:
    """The pieces and vectors of ``corpus`` (None when no sentence has a piece the model
    reads). The vectors are laid out once, each sentence's rows written as its batch comes
    (:mod:`analysis.search.store`): in memory, or with ``out`` (a folder) straight into its
    ``layers.npy`` and ``heads.npy``, returned memory-mapped, so that the build holds one batch
    of vectors whatever the corpus's size."""
    encs, kept = [], []
    for i in range(len(corpus)):
        try:
            encs.append(encode(loaded.tokenizer, corpus.texts[i], corpus.pairs[i],
                               max_length=loaded.max_length))
        except InputError:
            continue
        kept.append(i)
    if not encs:
        return None
    H, L, D = loaded.n_heads, loaded.n_layers, hidden_size(loaded)
    # a batch holds every layer's hidden states and context vectors of its longest example's
    # length: fewer examples a batch for long inputs and large models (the embedded model at
    # 256 tokens: 13; BERT-large at 512 tokens: 1, where 32 held 3.3 GB)
    longest = max(e.n_tokens for e in encs)
    batch_size = max(1, min(int(batch_size), BATCH_BYTES // (longest * (2 * L + 1) * D * 4)))
    keeps = [~np.asarray(e.special, bool) for e in encs]
    starts = np.concatenate([[0], np.cumsum([int(k.sum()) for k in keeps])]).astype(np.int64)
    n = int(starts[-1])
    layers = rows_store(out, "layers.npy", (L + 1,), n, D)
    heads = rows_store(out, "heads.npy", (L, H), n, D // H)
    done = 0
    try:
        for idx, fw in forward_batches(loaded.model, loaded.tokenizer, encs, batch_size,
                                       attentions=False, hidden_states=True,
                                       capture=("context",)):
            for b, i in enumerate(idx):
                hidden, ctx = _vectors(fw, b, keeps[i], H)
                layers.write(int(starts[i]), hidden)
                heads.write(int(starts[i]), ctx)
            del fw
            done += len(idx)
            if progress is not None:
                progress(done, len(encs))
        layers_array, heads_array = layers.finish(), heads.finish()
    except BaseException:
        for store in (layers, heads):
            if hasattr(store, "discard"):
                store.discard()
        raise
    tokens, sentence, position, word = [], [], [], []
    labels: dict[str, list[str]] = {name: [] for name in corpus.label_names}
    for s, (i, enc) in enumerate(zip(kept, encs)):
        per = corpus.piece_labels(i, enc)
        for t in range(enc.n_tokens):
            if enc.special[t]:
                continue
            tokens.append(enc.tokens[t])
            sentence.append(s)
            position.append(t)
            word.append(int(enc.word_ids[t]))
            for name in corpus.label_names:
                labels[name].append(per[name][t])
    notes = list(corpus.notes)
    if len(encs) < len(corpus):
        notes.append(f"Skipped {len(corpus) - len(encs)} sentence(s) with no token the model "
                     "can read.")
    n_cut = sum(e.truncated for e in encs)
    if n_cut:
        notes.append(f"{n_cut} sentence(s) longer than the model's {loaded.max_length} tokens "
                     "were cut.")
    return IndexData(tokens, np.asarray(sentence, np.int32), np.asarray(position, np.int32),
                     np.asarray(word, np.int32), labels, [corpus.numbers[i] for i in kept],
                     [corpus.texts[i] for i in kept], [corpus.pairs[i] for i in kept],
                     layers_array, heads_array, corpus.kind, corpus.label_names, notes)


@dataclass
class SearchJob:
    """The index's vectors as a corpus job over a Dataset (treebank, ABSA or text): plain
    parameters only, so it pickles to a Ray worker. A Dataset's ``line`` column (a .txt file's
    line numbers: ``analysis.search.corpus.with_lines``) numbers its sentences, else their
    place in the corpus."""

    spec: str
    batch_size: int = 32
    out: str | None = None  # in this process: the index folder its vectors are written to

    def load(self):
        return load_model(self.spec)

    def map(self, models, shard, rows, progress: Progress | None = None) -> IndexData | None:
        rows = list(rows)
        if not rows or shard is None or len(shard) == 0:
            return None
        corpus = search_corpus(shard)
        if "line" not in (shard.column_names or ()):  # else its own file line numbers
            corpus.numbers = [int(r) for r in rows]
        return index_data(models, corpus, self.batch_size, progress, out=self.out)

    def merge(self, partials: Sequence[IndexData | None]) -> IndexData:
        parts = sorted((p for p in partials if p is not None), key=lambda p: p.numbers[0])
        return concat(parts)


CACHE_KEEP = 8  # index folders kept in the cache (the oldest built go first)
CACHE_BYTES = 2 * 2**30  # and their bytes on disk (an index at the demo's caps: ~0.8 GB)


def folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def prune_cache(keep: int = CACHE_KEEP, spare: Path | None = None,
                max_bytes: int = CACHE_BYTES) -> list[Path]:
    """Remove the cache's index folders beyond the ``keep`` built last and beyond ``max_bytes``
    on disk, newest kept first (``spare`` stays whatever its age and size, and counts first),
    so that visitors' uploads cannot fill the disk; returns those removed. An index open
    elsewhere keeps reading its memory-mapped files (unlinked, not gone)."""
    root = cache_root() / CACHE_FOLDER
    if not root.is_dir():
        return []

    def built(folder: Path) -> float:
        meta = folder / "meta.json"
        return meta.stat().st_mtime if meta.is_file() else 0.0

    folders = []
    for f in root.iterdir():
        building = BUILDING.search(f.name)
        if building and process_alive(int(building.group(1))):
            continue  # another build's own folder, still being written
        if building:  # left by a process that is gone
            shutil.rmtree(f, ignore_errors=True)
        elif f.is_dir() and f != spare:
            folders.append(f)
    folders.sort(key=built, reverse=True)
    count = 1 if spare is not None else 0
    held = folder_bytes(spare) if spare is not None and spare.is_dir() else 0
    gone = []
    for folder in folders:
        size = folder_bytes(folder)
        if count < keep and held + size <= max_bytes:
            count, held = count + 1, held + size
        else:
            gone.append(folder)
            shutil.rmtree(folder, ignore_errors=True)
    return gone


BUILDING = re.compile(r"\.build-(\d+)-[0-9a-f]+$")  # a build's own folder: <index>.build-<pid>-<id>


def _into_place(built: Path, final: Path) -> SearchIndex:
    """The index built in its own folder ``built`` moved to ``final`` (a rename: readers see
    the old folder or the new one, never half of one); where another build of the same corpus
    and model finished first (the same vectors), its index is kept and this one removed."""
    if (final / "meta.json").is_file():
        try:
            index = SearchIndex.open(final)
            shutil.rmtree(built, ignore_errors=True)
            return index
        except DataError:
            pass
    old = None
    if final.exists():  # an unfinished or damaged folder: out of the way first
        old = final.with_name(f"{final.name}.old-{uuid.uuid4().hex[:8]}")
        try:
            os.rename(final, old)
        except OSError:
            old = None
    try:
        os.rename(built, final)
    except OSError:  # another build moved its folder there meanwhile: keep that one
        shutil.rmtree(built, ignore_errors=True)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return SearchIndex.open(final)


def cache_folder(model_hash: str, fingerprint: str, max_length: int = 512) -> Path:
    """Where the index of a corpus (fingerprint) for a model (weights hash, and the tokens
    per sentence it reads: a demo's cap cuts long sentences) is kept."""
    return cache_root() / CACHE_FOLDER / f"{model_hash[:16]}-{fingerprint}-{int(max_length)}"


def corpus_fingerprint(dataset) -> str:
    return search_corpus(dataset).fingerprint()


def build_index(loaded, dataset, out=None, *, batch_size: int = 32,
                exact_max_cells: int = EXACT_MAX_CELLS, progress: Progress | None = None,
                run=None, here: bool | None = None) -> SearchIndex:
    """Index ``dataset`` for ``loaded`` into ``out`` (default: the cache folder of the corpus
    and the model; an index already there is opened, not built again). ``run(job, dataset,
    progress)``: another runner of the job (Ray); default: in this process. ``here``: whether
    ``run`` maps the job in this process (default: when there is no ``run``), so that its
    vectors are written straight into the folder as they come (``analysis.search.store``).
    ``progress(done, 100)``."""
    info = model_info(loaded)
    fp = corpus_fingerprint(dataset)
    folder = Path(out) if out is not None else cache_folder(info["hash"], fp, loaded.max_length)
    if out is None and (folder / "meta.json").is_file():
        try:
            return SearchIndex.open(folder)
        except DataError:
            pass
    # in this process the vectors are written straight into the folder (the old index's
    # meta.json goes first: a folder without it is not an index); a cluster's come back
    here = run is None if here is None else here
    final = folder
    if out is None:  # the cache: built in a folder of its own, moved into place when whole
        # (two visitors' jobs for the same corpus take turns in the queue: writing one folder
        # they truncated and renamed each other's files, a FileNotFoundError for one of them)
        folder = final.with_name(f"{final.name}.build-{os.getpid()}-{uuid.uuid4().hex[:12]}")
    job = SearchJob(loaded.spec, batch_size, out=str(folder) if here else None)
    if here:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "meta.json").unlink(missing_ok=True)
    try:
        index = _build(job, loaded, dataset, folder, info, fp, exact_max_cells, progress, run)
    except BaseException:
        if folder != final:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    if folder != final:
        index = _into_place(folder, final)
    if out is None:
        prune_cache(spare=final)
    if progress is not None:
        progress(100, 100)
    return index


def _build(job, loaded, dataset, folder: Path, info: dict, fp: str, exact_max_cells: int,
           progress: Progress | None, run) -> SearchIndex:
    """The vectors (here, or by ``run``) and the rest of the index written into ``folder``."""

    def stage(start, width):
        if progress is None:
            return None
        return lambda d, t: progress(start + int(width * d / max(1, t)), 100)

    if run is not None:
        data = run(job, dataset, stage(0, 90))
        # a cluster's shards do not carry the corpus's own notes (the Dataset's description)
        whole = search_corpus(dataset).notes
        data.notes = whole + [n for n in data.notes if n not in whole]
    else:
        data = job.merge([job.map(loaded, dataset, range(len(dataset)), stage(0, 90))])
    return write_index(data, folder, info, fp, exact_max_cells, progress=stage(90, 10))


def corpus_lengths(loaded, dataset) -> list[int]:
    """Each sentence's tokens as the index reads it (the cost of building it:
    ``analysis.core.cost``)."""
    corpus = search_corpus(dataset)
    return lengths_of(loaded.tokenizer, corpus.texts, corpus.pairs, loaded.max_length)


def cached_index(loaded, dataset) -> SearchIndex | None:
    """The index of ``dataset`` for ``loaded`` already in the cache, or None."""
    folder = cache_folder(model_info(loaded)["hash"], corpus_fingerprint(dataset),
                          loaded.max_length)
    if not (folder / "meta.json").is_file():
        return None
    try:
        return SearchIndex.open(folder)
    except DataError:
        return None


@dataclass
class QueryPiece:
    """The query: the text's encoding, the piece's position, its vector."""

    encoding: object
    token: int
    vector: np.ndarray

    @property
    def piece(self) -> str:
        return self.encoding.tokens[self.token]


def check_model(loaded, index: SearchIndex) -> None:
    """InputError unless ``loaded`` has the weights the index was built with."""
    if model_weights_hash(loaded.model) != index.meta["model"]["hash"]:
        raise InputError(f"The index was built with {index.meta['model']['name']}; the model "
                         "given has other weights, so its vectors cannot be compared.")


def query_vector(loaded, text: str, token: int, layer: int, head: int | None = None,
                 pair: str | None = None, n_layers: int | None = None) -> QueryPiece:
    """The unit vector of piece ``token`` of ``text`` ([CLS] = 0) at ``layer`` (0 = the
    embeddings), or head ``head``'s (0-based) context vector there."""
    enc = encode(loaded.tokenizer, text, pair, max_length=loaded.max_length)
    L = n_layers or loaded.n_layers
    try:
        token = int(token)
    except (TypeError, ValueError):
        raise InputError(f"The token must be a whole number, not {token!r}.") from None
    if not 0 <= token < enc.n_tokens:
        raise InputError(f"The token must be from 0 to {enc.n_tokens - 1} (the text has "
                         f"{enc.n_tokens} pieces, [CLS] = 0), not {token}.")
    if not 0 <= int(layer) <= L:
        raise InputError(f"The layer must be from 0 (the embeddings) to {L}, not {layer}.")
    if head is not None and (int(layer) == 0 or not 0 <= int(head) < loaded.n_heads):
        raise InputError("A head's context vector needs a layer from 1 to "
                         f"{L} and a head from 1 to {loaded.n_heads}.")
    fw = forward(loaded.model, loaded.tokenizer, [enc], attentions=False, hidden_states=True,
                 capture=("context",) if head is not None else ())
    if head is None:
        vec = fw.hidden(0)[int(layer), token]
    else:
        ctx = fw.captured["context"][int(layer) - 1][0, token].float().numpy()
        dh = ctx.shape[0] // loaded.n_heads
        vec = ctx[int(head) * dh:(int(head) + 1) * dh]
    return QueryPiece(enc, token, unit_rows(vec[None])[0])


def query(loaded, index: SearchIndex, text: str, token: int, layer: int, k: int = 20,
          head: int | None = None, pair: str | None = None):
    """(the query piece, its ``k`` nearest pieces in ``index``, best first)."""
    check_model(loaded, index)
    index.check_set(layer, head)
    q = query_vector(loaded, text, token, layer, head, pair, index.n_layers)
    return q, index.search(q.vector, layer, head, k)
