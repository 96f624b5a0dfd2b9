"""The corpus picker shared by the corpus pages (No-op statistics, Fine-tuning drift...): the
bundled sample, pasted lines, an uploaded file or a Hugging Face dataset -> one
``datasets.Dataset`` (columns text, text_pair, and label where an upload has one).

Uploads are read from memory (Streamlit keeps them in memory; nothing is written to disk) and
forgotten with the session. In demo mode (``ui.server.settings``) no box can name a server path: the
Hugging Face source offers only the datasets the host lists by name (and is hidden when there
are none; a listed id is never read as a local folder), and the demo's caps go to the readers:
upload bytes and pasted text (``max_upload_bytes``), characters per example
(``max_line_chars``: longer texts are cut and counted in the notes) and examples
(``max_examples``: the cap widget's maximum; a larger value in the session is lowered, with a
note). Outside demo mode the readers' own limits apply."""

from __future__ import annotations

import math
import re
import weakref
from dataclasses import dataclass
from typing import Callable

import streamlit as st

from analysis.core.corpus import (MAX_MB, SAMPLE_FILE, corpus_fingerprint, corpus_notes,
                                  csv_columns, read_corpus, read_hf_dataset, read_labels,
                                  read_pasted, sample_corpus)
from analysis.core.errors import DataError, InputError
from ui.common.errors import plain, show_error, unreadable
from ui.server.settings import Settings, settings
from ui.common.frame.state import CorpusKeys, read

SAMPLE, PASTE, UPLOAD, HF = "Sample corpus", "Paste", "Upload", "Hugging Face dataset"
SOURCES = [SAMPLE, PASTE, UPLOAD, HF]
NONE = "(none)"
UPLOAD_TYPES = ("txt", "tsv", "jsonl", "json", "csv", "xml")


@dataclass(frozen=True)
class UploadReader:
    """A study's own reading of uploads (Search reads a .conllu file as a treebank, ABSA data
    with its aspect roles and a .txt file by its line numbers): ``read(data, name, cap,
    max_bytes, max_chars)`` returns the Dataset, or None to read the file as a plain corpus;
    ``types`` are the extensions it adds to the uploader's, ``what`` describes them in the
    uploader's label."""

    read: Callable[..., object]
    types: tuple[str, ...]
    what: str


@st.cache_data(max_entries=4, show_spinner="Loading the dataset...")
def _load_hf(name: str, split: str, column: str, pair: str | None, cap: int,
             max_chars: int | None, local_ok: bool):
    return read_hf_dataset(name, split, column, pair, max_examples=cap, max_chars=max_chars,
                           local_ok=local_ok)


@st.cache_resource(max_entries=4, show_spinner=False)
def _sample(stamp: tuple, cap: int):
    return sample_corpus(max_examples=cap)


def bundled_sample(cap: int):
    """The bundled sample corpus, read once per (file size and modification time, cap): a rerun
    reads nothing again."""
    st_ = SAMPLE_FILE.stat()
    return _sample((st_.st_size, st_.st_mtime_ns), cap)


_FINGERPRINTS: dict[tuple, str] = {}  # (id of a corpus object, the hash) -> its fingerprint


def fingerprint(dataset, compute=corpus_fingerprint) -> str:
    """``compute(dataset)`` (default ``analysis.core.corpus.corpus_fingerprint``; a study may hash
    its corpus its own way, as Search does) computed once per corpus object (a cached corpus is
    the same object on every rerun)."""
    key = (id(dataset), compute)
    fp = _FINGERPRINTS.get(key)
    if fp is None:
        fp = _FINGERPRINTS[key] = compute(dataset)
        weakref.finalize(dataset, _FINGERPRINTS.pop, key, None)
    return fp


# On a phone (390 px) a row of source buttons, and of tabs, wraps instead of hiding its last
# ones in a scrolling strip, and a chart wider than the screen scrolls inside its own box instead of
# being cut at the screen's edge.
NARROW_CSS = """<style>
@media (max-width: 640px) {
  [data-testid="stButtonGroup"] > div { flex-wrap: wrap; row-gap: 4px; overflow-x: visible; }
  [data-testid="stTabs"] [role="tablist"] { flex-wrap: wrap; overflow-x: visible; }
  [data-testid="stVegaLiteChart"] { max-width: 100%; overflow-x: auto; }
}
</style>"""


def fit_narrow_screens() -> None:
    """The page's styles for narrow screens (:data:`NARROW_CSS`); takes no room on the page."""
    st.html(NARROW_CSS)


def _mb(n: int) -> str:
    return f"{n / 2**20:.1f}".rstrip("0").rstrip(".") + " MB"  # MB as Streamlit counts


def upload_name(name: str | None) -> str:
    """The uploaded file's own name, without any folder part (a label and an extension only;
    never opened)."""
    base = re.split(r"[\\/]", str(name or ""))[-1].strip()
    return base[-120:] or "upload.txt"


def cap_widget(st_col, key: str, label: str, default: int, maximum: int, step: int,
               help: str | None = None, disabled: bool = False, bind: bool = False) -> int:
    """A number input whose maximum is ``maximum``; a value above it in the session (a
    previous setting) is lowered to it with a note. ``bind``: the value travels in the URL
    (``key=value``; a link's value outside 1..maximum is ignored)."""
    value = st.session_state.get(key, default)
    if isinstance(value, (int, float)) and value > maximum:
        st.session_state[key] = maximum
        st_col.caption(plain(f"{label}: lowered to {maximum}, this server's limit."))
    st.session_state.setdefault(key, min(default, maximum))
    return int(st_col.number_input(label, min_value=1, max_value=maximum, step=step, key=key,
                                   help=help, disabled=disabled,
                                   bind="query-params" if bind else None))


def corpus_picker(keys: CorpusKeys, *, default_cap: int = 200, max_cap: int = 20000,
                  labels: bool = False, cap_help: str | None = None,
                  reader: UploadReader | None = None):
    """Source and cap widgets (keys: ``keys``, ``ui.common.frame.state.CorpusKeys``) and the chosen
    corpus, or None while there is none yet (the picker says what to do; a bad file gets a
    one-line error). With ``labels``, an upload's ``label`` column is added for the split by
    label; ``reader`` reads the uploads it knows its own way. The reader's notes (blank lines
    skipped, the cap) are shown as captions."""
    conf = settings()
    fit_narrow_screens()
    sources = SOURCES if not conf.demo or conf.datasets else [SAMPLE, PASTE, UPLOAD]
    c1, c2 = st.columns([3, 1.2], vertical_alignment="bottom")
    source = c1.segmented_control("Corpus", sources, default=SAMPLE, key=keys.source,
                                  bind="query-params") or SAMPLE
    cap = cap_widget(c2, keys.cap, "Examples (at most)", default_cap,
                     conf.cap("max_examples", max_cap), 50, bind=True,
                     help=cap_help or "Only the first N examples are used; more takes longer.")
    dataset = None
    try:
        if source == SAMPLE:
            dataset = bundled_sample(cap)
            # its folder for local users in the tooltip, not in the text (issue 49)
            st.caption("The bundled sample corpus: 292 English sentences and sentence pairs "
                       "written for this project.",
                       help=settings().for_local("Its file: data/sample_corpus/corpus.txt.")
                       or None)
        elif source == PASTE:
            dataset = _pasted(keys, cap, conf)
        elif source == UPLOAD:
            dataset = _upload(keys, cap, labels, conf, reader)
        elif conf.demo:
            dataset = _listed_dataset(keys, cap, conf)
        else:
            dataset = _hub(keys, cap, conf)
    except (DataError, InputError, UnicodeDecodeError) as exc:
        show_error(exc)
        return None
    except Exception as exc:  # noqa: BLE001 - a library's failure on a visitor's data: one line
        show_error(unreadable(_what(source, keys), exc, detail=not conf.demo))
        return None
    if dataset is not None:
        for note in corpus_notes(dataset):
            st.caption(plain(note))
    return dataset


def _what(source: str, keys: CorpusKeys) -> str:
    """The corpus a reader failed on, in words (an upload by its own file name)."""
    if source == UPLOAD:
        return f"The file {upload_name(getattr(read(keys.upload), 'name', None))}"
    return {PASTE: "The pasted text", SAMPLE: "The sample corpus"}.get(source, "The dataset")


def _pasted(keys: CorpusKeys, cap: int, conf: Settings):
    limit = conf.max_upload_bytes
    pasted = st.text_area("One example per line (a tab separates a sentence pair)",
                          key=keys.paste, height=160, max_chars=limit,
                          placeholder="The soup was cold.\nThe staff were kind.\tWe stayed.")
    if not pasted.strip():
        st.info("Paste some sentences to analyse, one per line.", icon=":material/info:")
        return None
    return read_pasted(pasted, max_examples=cap, max_bytes=limit, max_chars=conf.max_line_chars)


def _upload(keys: CorpusKeys, cap: int, labels: bool, conf: Settings,
            reader: UploadReader | None = None):
    label_help = "; a 'label' column splits the results by label" if labels else ""
    limit = conf.max_upload_bytes
    what = reader.what if reader else ("A .txt (one example per line, tab for pairs), .jsonl "
                                       "(text, text_pair), .csv or SemEval .xml file")
    types = list(UPLOAD_TYPES) + [t for t in (reader.types if reader else ())
                                  if t not in UPLOAD_TYPES]
    up = st.file_uploader(
        f"{what}, up to {_mb(limit) if limit else f'{MAX_MB} MB'}{label_help}",
        type=types, key=keys.upload,
        max_upload_size=math.ceil(limit / 2**20) if limit else None)  # in the browser
    if up is None:
        st.info("Upload a corpus file to analyse.", icon=":material/upload_file:")
        return None
    data, name = up.getvalue(), upload_name(up.name)  # bytes in memory, the name as a label
    if reader is not None:
        own = reader.read(data, name, cap, limit, conf.max_line_chars)
        if own is not None:
            return own
    text_col, pair_col = "text", None
    if name.lower().endswith(".csv"):
        cols = csv_columns(data, name=name, max_bytes=limit)
        k1, k2 = st.columns(2)
        text_col = k1.selectbox("Text column", cols, key=keys.csv_text,
                                index=cols.index("text") if "text" in cols else 0)
        pair_col = k2.selectbox("Pair column (optional)", [NONE] + cols, key=keys.csv_pair)
        pair_col = None if pair_col == NONE else pair_col
    dataset = read_corpus(data, name=name, text_column=text_col, pair_column=pair_col,
                          max_examples=cap, max_bytes=limit, max_chars=conf.max_line_chars)
    if labels:
        gold, note = read_labels(data, dataset, name=name, text_column=text_col,
                                 max_bytes=limit)
        if gold is not None:
            dataset = dataset.add_column("label", gold)
        elif note:
            st.caption(plain(note))
    return dataset


def _listed_dataset(keys: CorpusKeys, cap: int, conf: Settings):
    """Demo mode: one of the host's datasets, by name."""
    name = st.selectbox("Dataset", list(conf.datasets), key=keys.hf_pick,
                        bind="query-params")
    ds = conf.datasets[name]
    return _load_hf(ds.id, ds.split, ds.column, ds.pair, cap, conf.max_line_chars, False)


def _hub(keys: CorpusKeys, cap: int, conf: Settings):
    h1, h2, h3, h4 = st.columns(4)
    bind = "query-params"
    name = h1.text_input("Dataset id or folder", key=keys.hf_name, placeholder="imdb",
                         bind=bind, max_chars=300)
    split = h2.text_input("Split", value="train", key=keys.hf_split, bind=bind,
                          max_chars=100)
    col = h3.text_input("Text column", value="text", key=keys.hf_column, bind=bind,
                        max_chars=100)
    pair = h4.text_input("Pair column (optional)", key=keys.hf_pair, bind=bind,
                         max_chars=100)
    if not name.strip():
        st.info("Give a Hugging Face dataset id that is in the local cache (or reachable "
                "online), its split and its text column.", icon=":material/info:")
        return None
    return _load_hf(name.strip(), split, col.strip(), pair.strip() or None, cap,
                    conf.max_line_chars, True)


def session_only_note(keys: CorpusKeys) -> str | None:
    """What a link to the page cannot carry: pasted lines and uploads stay in this session."""
    source = read(keys.source) or SAMPLE
    if source == PASTE:
        return "A link cannot carry pasted lines: they stay in this browser session; someone " \
               "who opens it gets the pasted-corpus box, empty."
    if source == UPLOAD:
        return "A link cannot carry an uploaded file: it stays in this browser session; " \
               "someone who opens it is asked to upload it."
    return None


def corpus_name(keys: CorpusKeys, dataset) -> str:
    """The corpus by name and size, for a finding's provenance (never a path or a file's
    content): the bundled sample, pasted lines, an upload by its file name, or the dataset."""
    n = len(dataset) if dataset is not None else 0
    source = read(keys.source) or SAMPLE
    if source == SAMPLE:
        name = "the bundled sample corpus"
    elif source == PASTE:
        name = "pasted lines"
    elif source == UPLOAD:
        up = read(keys.upload)
        name = f"the uploaded file {upload_name(getattr(up, 'name', None))}"
    else:
        picked = read(keys.hf_pick) or read(
            keys.hf_name) or "a Hugging Face dataset"
        name = f"the dataset {str(picked)[:120]}"
    return f"{name} ({n} examples)"
