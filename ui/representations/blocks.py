"""The Representations page's blocks: the second model, the cached one-input and corpus runs
(heavy ones through the server-wide job queue), the controls and the plain reading
(docs/METHODS.md section 13). Keys come from ``ui.representations.state``."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import streamlit as st

from analysis.absa.readers import load_absa, load_sample
from analysis.core.models import checkpoint_stamp
from analysis.representations.corpus import MAX_POINTS
from analysis.representations.projection import METHOD_NAMES, METHODS
from analysis.representations.study import CORPUS, STUDY, CorpusInputs, Inputs
from analysis.syntax.treebank import read_conllu, sample_treebank
from ui.common.frame.corpus import cap_widget
from ui.common.errors import plain
from ui.common.jobs import SHORT, run_job
from ui.common.frame.models import second_model
from ui.server.settings import settings
from ui.common.frame.url_select import url_selectbox
from ui.representations import state as S
from analysis.core.corpus import read_corpus, read_labels
from analysis.representations.inputs import absa_categories, absa_input, treebank_input
from analysis.representations.labelled import sentiment_corpus

CORPORA = {"treebank": "Treebank sample (UPOS)", "absa": "ABSA sample (aspect roles)",
           "sentiment": "ABSA sample reviews by sentiment (labels)",
           "ewt": "UD English EWT dev (the shared data)", "upload": "Upload a file"}
EWT = Path(__file__).resolve().parents[3] / "shared" / "data" / "ud_english_ewt" / \
    "en_ewt-ud-dev.conllu"
CORPUS_METHODS = ("pca", "tsne", "umap")
COLOURS = {"segment": "segment (A / B)", "special": "special tokens",
           "role": "role for the asked category", "upos": "part of speech (UPOS)"}
SOURCES = {"text": "The sidebar's text", "absa": "A review of the ABSA sample (roles)",
           "treebank": "A sentence of the treebank sample (UPOS)"}
SOURCE_COLOURS = {"text": ["segment", "special"], "absa": ["role", "segment", "special"],
                  "treebank": ["upos", "special"]}
SIZES = {"treebank": 104, "absa": 222, "sentiment": 222}  # sentences of the bundled samples
DEMO_POINTS = 500  # demo mode: words in the corpus scatter (t-SNE / UMAP of 7 layers x 2 models)


def second_model_spec() -> str:
    """The second checkpoint (``ui.common.frame.models.second_model``, as on the Syntax and Drift
    pages): in demo mode one of the host's listed models by name (the example checkpoint
    first); otherwise a listed name, a hub id or a folder, "example" by default once it is
    built. '' while none is given."""
    return second_model(st, S.SECOND_MODEL)


# ---------------------------------------------------------------------------------------------
# Cached computations


def _stamp(loaded) -> tuple:
    return (loaded.spec, checkpoint_stamp(loaded.spec)) if loaded is not None else ("", "")


@st.cache_data(max_entries=4, show_spinner=False)
def _absa_rows() -> dict[str, dict]:
    """The ABSA sample's reviews that name an aspect term with a category, by id."""
    return {str(r["id"]): dict(r) for r in load_sample() if absa_categories(r)}


@st.cache_data(max_entries=4, show_spinner=False)
def _treebank_rows() -> dict[str, dict]:
    return {str(r["id"]): dict(r) for r in sample_treebank()}


def labelled_input(loaded, src: S.InputSource):
    """The :class:`analysis.representations.inputs.LabelledInput` of ``src`` (None for the
    sidebar's text)."""
    if src.kind == "absa":
        return absa_input(loaded, _absa_rows()[src.example], src.category)
    if src.kind == "treebank":
        return treebank_input(loaded, _treebank_rows()[src.example])
    return None


@st.cache_data(max_entries=16, show_spinner="Projecting every layer...")
def _input(key: tuple, text: str, pair: str | None, method: str, src: S.InputSource,
           _loaded, _compare):
    inputs = Inputs(_loaded.spec, text, pair, _compare.spec if _compare is not None else None,
                    method=method, labelled=labelled_input(_loaded, src))
    if method in ("tsne", "umap"):  # one input, a fit per layer: the queue's short lane
        return run_job(f"{METHOD_NAMES[method]} of every layer",
                       STUDY.plan(inputs, (_loaded, _compare)), key=S.JOB_INPUT, lane=SHORT,
                       kind=f"Representations of one input ({METHOD_NAMES[method]})")
    # PCA: a second or less, in this run (it never waits behind a visitor's job)
    return STUDY.run(inputs, models=(_loaded, _compare))


def _own_text(text: str, pair: str | None, src: S.InputSource) -> tuple[str, str | None]:
    """The sidebar's text and pair, or none when the input is a sample's row."""
    return (text, pair) if src.kind == "text" else ("", None)


def input_key(loaded, compare, text: str, pair: str | None, method: str,
              src: S.InputSource = S.InputSource()) -> tuple:
    """What :func:`input_result` is cached on, as plain values (its chart's key too)."""
    return (_stamp(loaded), _stamp(compare), loaded.max_length, *_own_text(text, pair, src),
            method, (src.kind, src.example, src.category))


def input_result(loaded, compare, text: str, pair: str | None, method: str,
                 src: S.InputSource = S.InputSource()):
    """:func:`analysis.representations.input_representations` with the CLI's defaults, cached
    per (models and their checkpoint stamps, text, pair, method, the input's source)."""
    return _input((_stamp(loaded), _stamp(compare), loaded.max_length),
                  *_own_text(text, pair, src), method, src, loaded, compare)


def _read_upload(data: bytes, name: str, n: int):
    if name.lower().endswith((".conllu", ".txt")):
        return read_conllu(data, name=name, max_sentences=n)
    if name.lower().endswith((".csv", ".jsonl")):  # a labelled corpus: text, label
        cap = settings().max_upload_bytes
        ds = read_corpus(data, name=name, max_examples=n, max_bytes=cap)
        gold, _ = read_labels(data, ds, name=name, max_bytes=cap)
        return ds.add_column("label", gold) if gold is not None else ds
    ds = load_absa(data, name=name, max_bytes=settings().max_upload_bytes)
    return ds.select(range(min(n, len(ds))))


def corpus_data(kind: str, n: int, upload=None):
    """The chosen corpus, its first ``n`` sentences (``upload``: (bytes, file name))."""
    if kind == "treebank":
        return sample_treebank(max_sentences=n)
    if kind == "absa":
        return load_sample().select(range(min(n, SIZES["absa"])))
    if kind == "sentiment":
        return sentiment_corpus(load_sample().select(range(min(n, SIZES["sentiment"]))))
    if kind == "ewt":
        return read_conllu(EWT, max_sentences=n)
    return _read_upload(*upload, n)


@st.cache_data(max_entries=8, show_spinner=False)
def _corpus(key: tuple, n: int, method: str, _loaded, _compare, _dataset):
    inputs = CorpusInputs(_loaded.spec, _dataset,
                          _compare.spec if _compare is not None else None, method=method,
                          max_points=DEMO_POINTS if settings().demo else MAX_POINTS)
    names = _loaded.name + (f" and {_compare.name}" if _compare is not None else "")
    # with DASHBOARD_RAY_ADDRESS: the word rows on the cluster, as the command's --ray
    return run_job(f"Representations of {n} sentences: {names}",
                   CORPUS.plan(inputs, (_loaded, _compare)), key=S.JOB_CORPUS,
                   kind=f"Representations of a corpus ({METHOD_NAMES[method]})", size=n,
                   unit="sentences")


def _corpus_data_key(view: S.View, upload=None) -> tuple:
    return (view.corpus,) if upload is None else (hashlib.sha1(upload[0]).hexdigest(),)


def corpus_key(loaded, compare, view: S.View, upload=None) -> tuple:
    """What :func:`corpus_result` is cached on, as plain values (its scatter's key too)."""
    return (_stamp(loaded), _stamp(compare), _corpus_data_key(view, upload), view.n_sentences,
            view.corpus_method, settings().demo)


def corpus_result(loaded, compare, view: S.View, upload=None):
    """:func:`analysis.representations.corpus_representations` on the chosen corpus with the
    CLI's defaults, cached per (models and their stamps, corpus, sentences, projection)."""
    dataset = corpus_data(view.corpus, view.n_sentences, upload)
    return _corpus((_stamp(loaded), _stamp(compare), _corpus_data_key(view, upload)),
                   view.n_sentences, view.corpus_method, loaded, compare, dataset)


# ---------------------------------------------------------------------------------------------
# Controls


def _short(text: str, n: int = 70) -> str:
    return text if len(text) <= n else text[:n - 1] + "…"


def input_source() -> S.InputSource:
    """The one input's source: the sidebar's text, an ABSA sample review and the category it
    is asked about, or a treebank sample sentence (all in the URL)."""
    c1, c2, c3 = st.columns([1, 2, 1])
    kind = url_selectbox(c1, "Input", list(SOURCES), key=S.SOURCE, format_func=SOURCES.get,
                         help="A labelled input colours its tokens by role (ABSA: aspect term "
                              "of the asked category, opinion word, other aspect, other) or by "
                              "part of speech (treebank UPOS).")
    if kind == "absa":
        rows = _absa_rows()
        ex = url_selectbox(c2, "Review", list(rows), key=S.EXAMPLE,
                           format_func=lambda i: f"{i}: {_short(rows[i]['text'])}")
        cat = url_selectbox(c3, "Asked about", absa_categories(rows[ex]), key=S.CATEGORY)
        return S.InputSource("absa", ex, cat)
    if kind == "treebank":
        rows = _treebank_rows()
        ex = url_selectbox(c2, "Sentence", list(rows), key=S.EXAMPLE,
                           format_func=lambda i: f"{i}: {_short(' '.join(rows[i]['words']))}")
        return S.InputSource("treebank", ex)
    return S.InputSource()


def input_controls(tokens: list[str], source: str = "text") -> S.View:
    c1, c2, c3 = st.columns(3)
    method = url_selectbox(c1, "Projection", METHODS, key=S.METHOD,
                           format_func=METHOD_NAMES.get,
                           help="PCA per layer: each layer's own axes (VisBERT). Aligned: each "
                                "layer rotated onto the one before (Procrustes), so movement "
                                "means something. t-SNE and UMAP: seed 0.")
    colour = url_selectbox(c2, "Colour by", SOURCE_COLOURS[source], key=S.COLOUR,
                           format_func=COLOURS.get)
    options = list(range(len(tokens)))
    token = url_selectbox(c3, "Path of token", options, key=S.TOKEN,
                          default=min(1, len(tokens) - 1),
                          format_func=lambda i: f"{i + 1}: {tokens[i]}",
                          help="Its position at every layer, joined by a line (numbers: layers).")
    return S.View(method=method, colour=colour, token=int(token), source=source)


def corpus_sources() -> list[str]:
    """The bundled samples, the shared EWT dev file (locally, where it is), an upload."""
    local = not settings().demo and EWT.exists()
    return ["treebank", "absa", "sentiment"] + (["ewt"] if local else []) + ["upload"]


def corpus_controls() -> tuple[S.View, tuple[bytes, str] | None]:
    """The corpus widgets -> (the view, the upload's (bytes, name) or None)."""
    conf = settings()
    c1, c2, c3 = st.columns(3)
    kind = url_selectbox(c1, "Corpus", corpus_sources(), key=S.CORPUS, format_func=CORPORA.get)
    size = SIZES.get(kind)
    top = conf.cap("max_examples", size or 5000)
    n = cap_widget(c2, S.N_SENTENCES, "Sentences", default=min(top, size or 300), maximum=top,
                   step=10, bind=True, help=f"The first N sentences (at most {top}" +
                   (", this demo's cap)." if conf.max_examples == top else ")."))
    method = url_selectbox(c3, "Scatter projection", CORPUS_METHODS, key=S.CORPUS_METHOD,
                           format_func=METHOD_NAMES.get)
    view = S.View(corpus=kind, n_sentences=min(n, top), corpus_method=method)
    if kind != "upload":
        return view, None
    up = st.file_uploader("A CoNLL-U treebank (.conllu: UPOS colours and probe), ABSA data "
                          "(SemEval XML, ASTE .txt with ####, this project's .json: roles and "
                          "the aspect probe) or a labelled corpus (.csv / .jsonl with 'text' "
                          "and 'label': label colours and probe); read in memory, not kept",
                          type=["conllu", "xml", "json", "txt", "csv", "jsonl"], key=S.UPLOAD,
                          max_upload_size=math.ceil(conf.max_upload_bytes / 2 ** 20)
                          if conf.max_upload_bytes else None)
    if up is None:
        st.info("Upload a file to analyse.", icon=":material/upload_file:")
        return view, None
    return view, (up.getvalue(), up.name)


def reading_lines(lines) -> str:
    return "\n".join(f"- {plain(line)}" for line in lines)
