"""The Search page's blocks: the corpus; its index (built once through the job queue, or, for
the bundled corpora in demo mode, once per server in the background, in the one-input lane so
that it never waits behind the example's build; kept on disk under the corpus fingerprint and
the model's weights hash); the query controls; the matches with their sentences, labels and
links; the label histogram (docs/METHODS.md section 16). Keys come from ``ui.search.state``."""

from __future__ import annotations

import threading
from pathlib import Path

import altair as alt
import pandas as pd
import streamlit as st

from analysis.core.errors import DataError
from analysis.core.models import checkpoint_stamp
from analysis.core import cost
from analysis.search import SearchIndex, cache_folder
from analysis.search.job import corpus_fingerprint, corpus_lengths, model_info
from analysis.search.corpus import LABEL_NAMES, TABLE_SUFFIXES, read_data, with_lines
from analysis.search.index import Match, piece_text
from analysis.search.study import INDEX, IndexInputs
from ui.common.frame.corpus import UploadReader, cap_widget, corpus_picker, fingerprint
from ui.common.errors import plain
from ui.common.html import esc
from ui.common.jobs import SHORT, run_job, start_background_job
from ui.common.frame.links import attention_link
from ui.server import caches
from ui.server.settings import settings
from ui.common.frame.url_select import url_selectbox
from ui.search import state as S
from analysis.absa.readers import load_sample
from analysis.syntax.treebank import read_conllu, sample_treebank

CORPORA = {"treebank": "Treebank sample (UPOS, dependency relations)",
           "absa": "ABSA sample (aspect roles)",
           "ewt": "UD English EWT dev (the shared data)",
           "text": "Your own corpus (paste, upload: text, CoNLL-U, ABSA; Hugging Face) or the "
                   "sample corpus"}
EWT = Path(__file__).resolve().parents[3] / "shared" / "data" / "ud_english_ewt" / \
    "en_ewt-ud-dev.conllu"
BUNDLED = ("treebank", "absa")
EWT_DEFAULT = 500


def corpus_sources() -> list[str]:
    local = not settings().demo and EWT.exists()
    return ["treebank", "absa"] + (["ewt"] if local else []) + ["text"]


@st.cache_resource(max_entries=4, show_spinner=False)
def _bundled(kind: str):
    if kind == "treebank":
        return sample_treebank()
    return load_sample()


@st.cache_resource(max_entries=4, show_spinner="Reading the treebank...")
def _ewt(n: int):
    return read_conllu(EWT, max_sentences=n)


def _read_upload(data: bytes, name: str, cap: int, max_bytes: int | None,
                 max_chars: int | None):
    """An upload read as ``python -m analysis search index`` reads the file: a .conllu
    treebank with its UPOS and relations, ABSA data with its aspect roles, a .txt file numbered
    by its lines; None for a .csv or .jsonl file (the picker's reader, with its column
    choice, adds the 'label' column as the CLI does)."""
    if name.lower().endswith(TABLE_SUFFIXES):
        return None
    ds, lines = read_data(data, name=name, max_examples=cap, max_bytes=max_bytes,
                          max_chars=max_chars)
    return with_lines(ds, lines)


UPLOADS = UploadReader(_read_upload, ("conllu",),
                       "A CoNLL-U treebank (.conllu), ABSA data (SemEval .xml, .json, ASTE "
                       ".txt), or a text corpus: .txt (one sentence per line, tab for pairs), "
                       ".jsonl (text, text_pair) or .csv")


def corpus_choice() -> tuple[str, object | None, str]:
    """(kind, the Dataset or None while there is none yet, its name for the report)."""
    kind = url_selectbox(st, "Corpus", corpus_sources(), key=S.CORPUS, format_func=CORPORA.get,
                         help="The sentences searched. The treebank's words carry their part "
                              "of speech and dependency relation, the ABSA reviews' words "
                              "their aspect role; a text corpus carries its 'label' column "
                              "where it has one.")
    if kind in BUNDLED:
        ds = _bundled(kind)
        return kind, ds, f"{CORPORA[kind]} ({len(ds)} sentences)"
    if kind == "ewt":
        n = cap_widget(st, S.N_SENTENCES, "Sentences", EWT_DEFAULT, 2002, 100, bind=True,
                       help="The first N sentences of the dev file.")
        ds = _ewt(n)
        return kind, ds, f"UD English EWT dev ({len(ds)} sentences)"
    ds = corpus_picker(S.TEXT_CORPUS, default_cap=300, labels=True, reader=UPLOADS)
    return kind, ds, "a text corpus" + (f" ({len(ds)} sentences)" if ds is not None else "")


# ---------------------------------------------------------------------------------------------
# The index

_BACKGROUND: dict[tuple, object] = {}
_LOCK = threading.Lock()


def _build(loaded, dataset):
    """The index's one description (the command's too): its vectors wherever the server's
    placement puts heavy work, a Ray cluster included (with the page's token cap)."""
    return INDEX.plan(IndexInputs(loaded.spec, dataset, max_length=loaded.max_length), loaded)


def _opened(folder: str, stamp: float) -> SearchIndex:
    """The index in ``folder`` (built at ``stamp``), opened once while the server's index cache
    has room (:func:`ui.server.caches.indexes`: bounded by bytes, per visitor too)."""
    return caches.indexes().get_or_make(("search index", folder, stamp),
                                        lambda: SearchIndex.open(folder), owner=caches.owner())


def _open(index: SearchIndex) -> SearchIndex:
    """One opened index per folder in this server (its faiss sets are built once)."""
    meta = index.folder / "meta.json"
    return _opened(str(index.folder), meta.stat().st_mtime)


def _cached(loaded, dataset) -> SearchIndex | None:
    folder = cache_folder(model_info(loaded)["hash"], fingerprint(dataset, corpus_fingerprint),
                          loaded.max_length)
    if not (folder / "meta.json").is_file():
        return None
    try:
        return _opened(str(folder), (folder / "meta.json").stat().st_mtime)
    except DataError:
        return None


def index_for(loaded, kind: str, dataset):
    """The index of ``dataset`` for ``loaded``: from the cache folder when built, else built
    now through the job queue; the bundled corpora in demo mode once per server, in the
    background (then the running :class:`BackgroundJob` instead of an index: the page shows
    its progress with :func:`watch`)."""
    found = _cached(loaded, dataset)
    if found is not None:
        return found
    n = len(dataset)
    if settings().demo and kind in BUNDLED:
        key = (loaded.spec, checkpoint_stamp(loaded.spec), kind)
        with _LOCK:
            job = _BACKGROUND.get(key)
            if job is None:
                # a second or two (a hundred-odd sentences): in the one-input lane, not
                # behind the background lane's example build or Head importance's first view
                job = _BACKGROUND[key] = start_background_job(
                    f"Search index of the {kind} sample", _build(loaded, dataset),
                    key=S.JOB_INDEX, kind=S.JOB_KIND, size=n, unit="sentences", lane=SHORT)
        if not job.done.is_set():
            return job
        if job.error is not None:
            with _LOCK:
                _BACKGROUND.pop(key, None)
            raise job.error
        return _open(job.result)
    lengths = corpus_lengths(loaded, dataset)  # refused up front when it passes the budget
    estimate = cost.check_job("search", cost.shape_of(loaded), lengths,
                              settings().max_job_seconds, "Indexing this corpus", "sentences")
    note = st.empty()
    note.caption(plain(cost.estimate_words(estimate, n, sum(lengths), "sentences")))
    try:
        index = run_job(f"Search index of {n} sentences: {loaded.name}",
                        _build(loaded, dataset), key=S.JOB_INDEX, kind=S.JOB_KIND, size=n,
                        unit="sentences")
    finally:
        note.empty()
    return _open(index)


@st.fragment(run_every=2.0)
def watch(job) -> None:
    """The server's shared index being built: its progress every 2 s; the whole page reruns
    once it is done."""
    if job.done.is_set():
        st.rerun(scope="app")
    st.progress(job.fraction, text=plain(
        "Building this server's index of the bundled corpus once, for every visitor: "
        f"{100 * job.fraction:.0f}% done."))


# ---------------------------------------------------------------------------------------------
# The query


def query_controls(tokens: list[str], special, n_layers: int, n_heads: int,
                   label_names: list[str]):
    """(token, layer, head or None, k, label name) from the widgets (all in the URL)."""
    c1, c2, c3, c4 = st.columns([2, 1, 1.3, 1])
    first = next((i for i, s in enumerate(special) if not s), 0)
    token_names = {i: f"{i}: {t}" for i, t in enumerate(tokens)}
    token = url_selectbox(c1, "Token", list(token_names), key=S.TOKEN, default=first,
                          format_func=token_names.get,
                          help="The word piece of the sidebar's text to search for ([CLS] = "
                               "0, as the tokenizer encodes the text).")
    layer_names = {v: "0 (embeddings)" if v == 0 else str(v) for v in range(n_layers + 1)}
    layer = url_selectbox(c2, "Layer", list(layer_names), key=S.LAYER,
                          default=min(S.DEFAULT_LAYER, n_layers), format_func=layer_names.get)
    head_names = {S.WHOLE_LAYER: "whole layer"}
    if layer:
        head_names.update({str(h): f"head {h} context" for h in range(1, n_heads + 1)})
    head = url_selectbox(c3, "Vectors", list(head_names), key=S.HEAD,
                         format_func=head_names.get,
                         help="The whole layer's hidden states, or one head's context vectors "
                              "(what the head passes on: its attention-weighted values).")
    k = url_selectbox(c4, "Matches", [10, 20, 50, 100, S.MAX_K], key=S.K, default=S.DEFAULT_K)
    label = None
    if label_names:
        label = url_selectbox(st, "Count matches by", label_names, key=S.LABEL,
                              format_func=lambda v: LABEL_NAMES.get(v, v))
    return int(token), int(layer), (None if head == S.WHOLE_LAYER else int(head) - 1), int(k), \
        label


# ---------------------------------------------------------------------------------------------
# The matches

MATCH_CSS = ("<style>.sm-list{margin:0;padding:0;list-style:none}"
             ".sm-item{padding:4px 0;border-bottom:1px solid rgba(49,51,63,.1);line-height:1.5;"
             "overflow-wrap:anywhere}"
             ".sm-item mark{background:#ffe08a;padding:0 3px;border-radius:3px;font-weight:600}"
             ".sm-meta{font-size:.8rem;opacity:.75}.sm-lab{font-size:.8rem;margin-left:6px;"
             "padding:0 5px;border-radius:4px;background:#eef1f6}</style>")


def attention_href(spec: str, index: SearchIndex, m: Match, layer: int, head: int | None) -> str:
    """The Attention page on the match's sentence, its piece pinned, at the layer (layer 1 for
    the embeddings) and head (head 1 for a whole layer)."""
    s = int(index.sentence[m.row])
    url = attention_link(spec, index.texts[s], index.pairs[s], max(1, layer),
                         (head or 0) + 1, view="Head view")
    return f"{url}&pin={m.position + 1}"


def matches_html(spec: str, index: SearchIndex, matches: list[Match], layer: int,
                 head: int | None, own: int | None) -> str:
    """The matches as an escaped HTML list: score, sentence number, the sentence with the match
    highlighted between its neighbours, its labels, the link to the Attention page."""
    items = []
    for rank, m in enumerate(matches, 1):
        before, word, after = index.context(m.row)
        rows = index.rows_of(m.row)
        pieces = [r for r in rows if index.word[r] == index.word[m.row]]
        mark = "".join(f"<mark>{esc(piece_text(index.tokens[r], j))}</mark>" if r == m.row
                       else esc(piece_text(index.tokens[r], j)) for j, r in enumerate(pieces))
        labels = "".join(f"<span class='sm-lab'>{esc(LABEL_NAMES.get(k, k))}: {esc(v)}</span>"
                         for k, v in m.labels.items())
        you = " (the query itself)" if m.row == own else ""
        href = esc(attention_href(spec, index, m, layer, head))
        items.append(
            f"<li class='sm-item'><span class='sm-meta'>{rank}. cosine {m.score:.3f} · "
            f"sentence {m.sentence} · piece {m.position}{esc(you)}</span>{labels}<br>"
            f"{esc(before)} {mark} {esc(after)} "
            f"<a href='{href}' target='_self'>open in Attention</a></li>")
    return MATCH_CSS + "<ol class='sm-list'>" + "".join(items) + "</ol>"


def matches_frame(index: SearchIndex, matches: list[Match]) -> pd.DataFrame:
    rows = []
    for m in matches:
        before, word, after = index.context(m.row)
        rows.append({"sentence": m.sentence, "position": m.position, "token": m.token,
                     "score": round(m.score, 4), **m.labels,
                     "context": f"{before} [{word}] {after}".strip()})
    return pd.DataFrame(rows)


def histogram(rows: list[dict], name: str, top: int = 12) -> alt.Chart:
    """The labels' shares among the matches against the corpus (bars side by side per
    label), fitting a phone: labels on the vertical axis."""
    rows = rows[:top]
    long = pd.DataFrame([{"label": r["label"], "among": who, "share (%)": r[col]}
                         for r in rows for who, col in (("matches", "matches (%)"),
                                                        ("corpus (chance)", "corpus (%)"))])
    order = [r["label"] for r in rows]
    # every label written (issue 49: a chart stretched to the page's width was fitted into its
    # height, title, axis and legend included, and vega dropped every other label): the
    # height is the bars' own (fit-x) and no label is left out
    return alt.Chart(long, title=LABEL_NAMES.get(name, name)).mark_bar().encode(
        y=alt.Y("label:N", sort=order, title=None, axis=alt.Axis(labelOverlap=False)),
        yOffset=alt.YOffset("among:N", sort=["matches", "corpus (chance)"]),
        x=alt.X("share (%):Q", scale=alt.Scale(domain=[0, 100])),
        color=alt.Color("among:N", sort=["matches", "corpus (chance)"],
                        scale=alt.Scale(range=["#4c78a8", "#bab0ac"]),
                        legend=alt.Legend(orient="bottom", title=None)),
        tooltip=["label:N", "among:N", alt.Tooltip("share (%):Q", format=".1f")],
    ).properties(height=max(120, 30 * len(rows)),
                 autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))
