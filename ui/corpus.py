"""The corpus picker shared by the corpus pages (No-op statistics, Fine-tuning drift...): the
bundled sample, pasted lines, an uploaded file or a Hugging Face dataset -> one
``datasets.Dataset`` (columns text, text_pair, and label where an upload has one)."""

from __future__ import annotations

import streamlit as st

from analysis.corpus import (MAX_MB, corpus_notes, csv_columns, read_corpus, read_hf_dataset,
                             read_labels, read_pasted, sample_corpus)
from analysis.errors import DataError, InputError
from ui.errors import show_error

SAMPLE, PASTE, UPLOAD, HF = "Sample corpus", "Paste", "Upload", "Hugging Face dataset"
SOURCES = [SAMPLE, PASTE, UPLOAD, HF]
NONE = "(none)"


@st.cache_data(max_entries=4, show_spinner="Loading the dataset...")
def _load_hf(name: str, split: str, column: str, pair: str | None, cap: int):
    return read_hf_dataset(name, split, column, pair, max_examples=cap)


def corpus_picker(prefix: str, *, default_cap: int = 200, max_cap: int = 20000,
                  labels: bool = False, cap_help: str | None = None):
    """Source and cap widgets (keys ``{prefix}_source``, ``{prefix}_max``, ...) and the chosen
    corpus, or None while there is none yet (the picker says what to do; a bad file gets a
    one-line error). With ``labels``, an upload's ``label`` column is added for the split by
    label. The reader's notes (blank lines skipped, the cap) are shown as captions."""
    c1, c2 = st.columns([3, 1.2], vertical_alignment="bottom")
    source = c1.segmented_control("Corpus", SOURCES, default=SAMPLE,
                                  key=f"{prefix}_source") or SAMPLE
    st.session_state.setdefault(f"{prefix}_max", default_cap)
    cap = int(c2.number_input("Examples (at most)", min_value=1, max_value=max_cap, step=50,
                              key=f"{prefix}_max",
                              help=cap_help or "Only the first N examples are used; more "
                                               "takes longer."))
    dataset = None
    try:
        if source == SAMPLE:
            dataset = sample_corpus(max_examples=cap)
            st.caption("The bundled sample corpus: 292 English sentences and sentence pairs "
                       "written for this project (data/sample_corpus).")
        elif source == PASTE:
            pasted = st.text_area("One example per line (a tab separates a sentence pair)",
                                  key=f"{prefix}_paste", height=160,
                                  placeholder="The soup was cold.\nThe staff were kind.\tWe stayed.")
            if pasted.strip():
                dataset = read_pasted(pasted, max_examples=cap)
            else:
                st.info("Paste some sentences to analyse, one per line.", icon=":material/info:")
        elif source == UPLOAD:
            dataset = _upload(prefix, cap, labels)
        else:
            dataset = _hub(prefix, cap)
    except (DataError, InputError, UnicodeDecodeError) as exc:
        show_error(exc)
        return None
    if dataset is not None:
        for note in corpus_notes(dataset):
            st.caption(note)
    return dataset


def _upload(prefix: str, cap: int, labels: bool):
    label_help = "; a 'label' column splits the results by label" if labels else ""
    up = st.file_uploader(
        f"A .txt (one example per line, tab for pairs), .jsonl (text, text_pair), .csv or "
        f"SemEval .xml file, up to {MAX_MB} MB{label_help}",
        type=["txt", "tsv", "jsonl", "json", "csv", "xml"], key=f"{prefix}_upload")
    if up is None:
        st.info("Upload a corpus file to analyse.", icon=":material/upload_file:")
        return None
    text_col, pair_col = "text", None
    if up.name.lower().endswith(".csv"):
        cols = csv_columns(up, name=up.name)
        k1, k2 = st.columns(2)
        text_col = k1.selectbox("Text column", cols, key=f"{prefix}_csv_text",
                                index=cols.index("text") if "text" in cols else 0)
        pair_col = k2.selectbox("Pair column (optional)", [NONE] + cols, key=f"{prefix}_csv_pair")
        pair_col = None if pair_col == NONE else pair_col
    dataset = read_corpus(up, name=up.name, text_column=text_col, pair_column=pair_col,
                          max_examples=cap)
    if labels:
        gold, note = read_labels(up, dataset, name=up.name, text_column=text_col)
        if gold is not None:
            dataset = dataset.add_column("label", gold)
        elif note:
            st.caption(note)
    return dataset


def _hub(prefix: str, cap: int):
    h1, h2, h3, h4 = st.columns(4)
    name = h1.text_input("Dataset id or folder", key=f"{prefix}_hf_name", placeholder="imdb")
    split = h2.text_input("Split", value="train", key=f"{prefix}_hf_split")
    col = h3.text_input("Text column", value="text", key=f"{prefix}_hf_col")
    pair = h4.text_input("Pair column (optional)", key=f"{prefix}_hf_pair")
    if not name.strip():
        st.info("Give a Hugging Face dataset id that is in the local cache (or reachable "
                "online), its split and its text column.", icon=":material/info:")
        return None
    return _load_hf(name.strip(), split, col.strip(), pair.strip() or None, cap)
