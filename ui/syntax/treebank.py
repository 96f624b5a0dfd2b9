"""The Syntax page's treebank: the picker (the bundled sample, a paste, an upload or, outside
demo mode, a Hugging Face dataset) and the cached reads (a rerun reads nothing again)."""

from __future__ import annotations

import hashlib
import weakref

import streamlit as st

from analysis.core.errors import DataError
from analysis.syntax import treebank as syntax_treebank
from ui.common.frame.corpus import fit_narrow_screens
from ui.server.settings import settings
from ui.common.frame.state import CorpusKeys

Q = "query-params"  # widgets bound to the URL: a copied link opens the same view
SAMPLE, PASTE, UPLOAD, HF = "Sample treebank", "Paste", "Upload", "Hugging Face dataset"
PASTE_EXAMPLE = "1\tThe\tthe\tDET\t_\t_\t2\tdet\t_\t_\n2\tsoup\tsoup\tNOUN\t_\t_\t0\troot\t_\t_\n"


def sources() -> list[str]:
    """Sample, paste and upload; a Hugging Face id too outside demo mode (a demo names no
    dataset of its own for treebanks)."""
    extra = [HF] if not settings().demo and hasattr(syntax_treebank, "read_hf_treebank") else []
    return [SAMPLE, PASTE, UPLOAD, *extra]


@st.cache_data(max_entries=4, show_spinner="Loading the treebank...")
def _load_hf(name: str, split: str, cap: int):
    return syntax_treebank.read_hf_treebank(name, split, max_sentences=cap)


def _checked_bytes(data: bytes, label: str) -> bytes:
    limit = settings().max_upload_bytes
    if limit is not None and len(data) > limit:
        raise DataError(f"{label} has {len(data):,} bytes; this server reads at most "
                        f"{limit:,}.")
    return data


@st.cache_resource(max_entries=4, show_spinner="Reading the treebank...")
def _read_sample(stamp: tuple, cap: int):
    return syntax_treebank.sample_treebank(max_sentences=cap)


@st.cache_resource(max_entries=8, show_spinner="Reading the treebank...")
def _read_bytes(digest: str, name: str, cap: int, _data: bytes):
    return syntax_treebank.read_conllu(_data, name=name, max_sentences=cap)


def read_treebank(source: str, cap: int, *, text: str = "", upload=None, hf=("", "")):
    """The picked treebank (raises DataError / InputError with one line), read once: the
    bundled sample per (file size and modification time, cap), a paste or an upload per
    (content hash, name, cap); a rerun finds it in the cache."""
    if source == SAMPLE:
        st_ = syntax_treebank.SAMPLE_TREEBANK.stat()
        return _read_sample((st_.st_size, st_.st_mtime_ns), cap)
    if source in (PASTE, UPLOAD):
        data = _checked_bytes(text.encode("utf-8"), "The pasted text") if source == PASTE \
            else _checked_bytes(upload.getvalue(), "The upload")
        name = "the pasted text" if source == PASTE else upload.name
        return _read_bytes(hashlib.sha256(data).hexdigest(), name, cap, data)
    return _load_hf(hf[0], hf[1], cap)


def treebank_picker(keys: CorpusKeys, default_cap: int = 500):
    """(source, dataset or None): the source and cap widgets and, for a paste / upload / hub
    id, its box; None while there is nothing to read yet. Errors go to the caller."""
    fit_narrow_screens()
    c1, c2 = st.columns([3, 1.2], vertical_alignment="bottom")
    source = c1.segmented_control("Treebank", sources(), default=SAMPLE,
                                  key=keys.source, bind=Q) or SAMPLE
    limit = settings().max_examples or 100_000
    st.session_state.setdefault(keys.cap, min(default_cap, limit))
    cap = int(c2.number_input("Sentences (at most)", min_value=1, max_value=limit, step=100,
                              key=keys.cap, bind=Q,
                              help="Only the first N sentences are read; more takes longer."))
    cap = settings().cap("max_examples", cap)
    if source == SAMPLE:
        st.caption("The bundled sample: 104 English sentences written and annotated by hand "
                   "for this project following the Universal Dependencies v2 guidelines.",
                   help=settings().for_local("Its file: data/treebank/sample.conllu.") or None)
        return source, read_treebank(source, cap)
    if source == PASTE:
        text = st.text_area("CoNLL-U text (10 tab-separated columns per word, a blank line "
                            "between sentences)", key=keys.paste, height=160,
                            placeholder=PASTE_EXAMPLE)
        if not text.strip():
            st.info("Paste CoNLL-U sentences to analyse.", icon=":material/info:")
            return source, None
        return source, read_treebank(source, cap, text=text)
    if source == UPLOAD:
        up = st.file_uploader("A CoNLL-U file (.conllu), e.g. a Universal Dependencies "
                              "treebank; read in memory, not kept", type=["conllu", "txt"],
                              key=keys.upload, max_upload_size=settings().upload_mb)
        if up is None:
            st.info("Upload a .conllu file to analyse.", icon=":material/upload_file:")
            return source, None
        return source, read_treebank(source, cap, upload=up)
    h1, h2 = st.columns(2)
    name = h1.text_input("Dataset id", key=keys.hf_name, bind=Q, max_chars=300,
                         placeholder="universal_dependencies")
    split = h2.text_input("Split", value="validation", key=keys.hf_split, bind=Q,
                          max_chars=100)
    if not name.strip():
        st.info("Give a Hugging Face dataset id with UD-style columns (tokens, head, deprel) "
                "that is in the local cache or reachable online.", icon=":material/info:")
        return source, None
    return source, read_treebank(source, cap, hf=(name.strip(), split.strip()))


_FINGERPRINTS: dict[int, str] = {}  # id of a treebank read once (cached) -> its fingerprint


def fingerprint(dataset) -> str:
    """The treebank's fingerprint, computed once per treebank object (the cached readers hand
    the same object to every rerun)."""
    key = id(dataset)
    fp = _FINGERPRINTS.get(key)
    if fp is None:
        fp = _FINGERPRINTS[key] = syntax_treebank.treebank_fingerprint(dataset)
        weakref.finalize(dataset, _FINGERPRINTS.pop, key, None)
    return fp
