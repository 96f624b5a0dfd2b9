"""The Search study's one interface (:mod:`analysis.core.study`): :data:`INDEX`, a corpus's
index (``python -m analysis search index``, the page's index of the chosen corpus), and
:data:`STUDY`, the pieces nearest to one piece of a text (``search query``, the page's matches).

The index is ONE description for the command and the page alike: a
:class:`~analysis.core.execution.work.Study` whose corpus job (the vectors of every piece) goes
through the placement's runner, so the page's index reaches a Ray cluster exactly when the
command's ``--ray`` does; the folder is written where the study runs (this machine)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from analysis.core.execution.corpus import run_local
from analysis.core.execution.work import Capped, Study
from analysis.core.models import load_model
from analysis.core.study import Field, Schema, StudyDef, StudyResult
from analysis.search.index import EXACT_MAX_CELLS, Match, SearchIndex, SetInfo
from analysis.search.job import QueryPiece, build_index, query
from analysis.search.reading import own_row

UNIT = "sentences"


@dataclass(frozen=True)
class IndexInputs:
    """A corpus (a Dataset: a treebank, ABSA data or text; its ``line`` column numbers a .txt
    file's sentences) for the model ``spec``: the folder (None: the cache folder of the corpus
    and the model, opened when it holds the index already), the sentences per forward, the
    largest set searched exactly, and the token cap of the model (None: its own)."""

    spec: str
    dataset: Any
    out: str | None = None
    batch_size: int = 32
    exact_max_cells: int = EXACT_MAX_CELLS
    max_length: int | None = None


def index_plan(inputs: IndexInputs, models=None) -> Study:
    """The index as a study of one corpus job (``models``: the loaded model, or None: loaded
    by its spec; the token cap applied): its vectors in this process or over shards on a Ray
    cluster, then the folder written here; where the cluster's workers cannot load the model,
    all of it here."""
    loaded = models if models is not None else load_model(inputs.spec)
    if inputs.max_length and loaded.max_length != inputs.max_length:
        loaded = replace(loaded, max_length=inputs.max_length)

    def build(progress, run) -> SearchIndex:
        def vectors(job, dataset, count):  # the placement's runner: here or on the cluster
            job = Capped(job, inputs.max_length) if inputs.max_length else job
            return run(job, loaded, dataset, count)

        # mapped in this process: its vectors written into the folder as they come
        return build_index(loaded, inputs.dataset, inputs.out, batch_size=inputs.batch_size,
                           exact_max_cells=inputs.exact_max_cells, run=vectors,
                           here=run is run_local,
                           progress=lambda d, t: progress(d / max(t, 1), f"{d}% done"))

    return Study(build, inputs.spec, size=len(inputs.dataset), unit=UNIT,
                 here_if_unloadable=True)


INDEX = StudyDef(name="search-index", title="Search: the index", inputs=IndexInputs,
                 result=SearchIndex, plan=index_plan)


@dataclass(frozen=True)
class Inputs:
    """A query: the opened index, the model's spec (it must have the index's weights), the
    text (and pair) holding the piece, its position ([CLS] = 0), the layer (0 = the
    embeddings), the head (0-based; None: the layer's hidden states) and how many matches."""

    index: Any
    spec: str
    text: str
    token: int
    layer: int
    head: int | None = None
    k: int = 20
    pair: str | None = None


@dataclass
class SearchResult(StudyResult):
    """The pieces of the index nearest to the query piece, best first; its JSON (the
    ``search query`` command's, the page's download): :data:`SCHEMA`."""

    SCHEMA = Schema((
        Field("model", "the index's model (its name)"),
        Field("text", "the text holding the query piece"),
        Field("pair", "its second text (null: none)"),
        Field("token", "the query piece's position ([CLS] = 0)"),
        Field("piece", "the query piece"),
        Field("layer", "the layer searched (0 = the embeddings)"),
        Field("head", "the head whose context vectors were searched (1-based; null: the "
                      "layer's hidden states)"),
        Field("k", "matches found"),
        Field("search", "how the set is searched: {backend, recall, ef_search}"),
        Field("matches", "best first: {sentence (its number: a .txt file's line), position, "
                         "token, score (cosine, 6 decimals), labels}"),
    ))

    model: str
    text: str
    pair: str | None
    token: int
    piece: str
    layer: int
    head: int | None  # 0-based
    search: SetInfo
    matches: list[Match]
    own: int | None = None  # the query piece's own row when its text is in the corpus
    query: QueryPiece | None = field(default=None, repr=False)

    def json_fields(self) -> dict:
        return {"model": self.model, "text": self.text, "pair": self.pair, "token": self.token,
                "piece": self.piece, "layer": self.layer,
                "head": None if self.head is None else self.head + 1, "k": len(self.matches),
                "search": self.search.to_json(), "matches": [m.to_json() for m in self.matches]}

    @classmethod
    def from_json(cls, data: dict) -> "SearchResult":
        """The matches back from their JSON (their rows in the index are not kept: -1)."""
        cls.SCHEMA.check(data)
        matches = [Match(-1, m["sentence"], m["position"], m["token"], m["score"],
                         dict(m.get("labels") or {})) for m in data["matches"]]
        head = data["head"] - 1 if data["head"] is not None else None
        return cls(data["model"], data["text"], data["pair"], data["token"], data["piece"],
                   data["layer"], head, SetInfo(**data["search"]), matches)


def plan(inputs: Inputs, models=None):
    """Light work on one input (``models``: the loaded model, or None: loaded by its spec):
    the query vector, the search."""
    models = models if models is not None else load_model(inputs.spec)

    def work(progress) -> SearchResult:
        index = inputs.index
        q, matches = query(models, index, inputs.text, inputs.token, inputs.layer, inputs.k,
                           inputs.head, inputs.pair)
        return SearchResult(index.meta["model"]["name"], q.encoding.text, q.encoding.pair,
                            q.token, q.piece, inputs.layer, inputs.head,
                            index.info(inputs.layer, inputs.head), matches,
                            own_row(index, q.encoding.text, q.token, q.encoding.pair), q)

    return work


STUDY = StudyDef(name="search", title="Search", inputs=Inputs, result=SearchResult, plan=plan)
