"""AppTest of the Representations page with labelled data: a deep link picks an ABSA sample
review and its asked category (tokens coloured by role, the reading says so), a treebank
sentence (UPOS per token); the colour options follow the input; the bundled sentiment corpus
colours words by their review's label and probes it; a .csv without a label column is refused
in one line."""

from __future__ import annotations

import numpy as np

from analysis.absa.readers import load_sample
from analysis.representations import input_representations
from analysis.representations.inputs import absa_input, treebank_input
from analysis.syntax.treebank import sample_treebank
from ui.representations import state as S

from test_page_representations import _local, frames, lookups, open_page, points  # noqa: F401


def test_deep_link_to_an_absa_review_colours_by_role(default_model):
    row = dict(load_sample()[0])
    at = open_page(**{S.SOURCE: "absa", S.EXAMPLE: row["id"], S.CATEGORY: "food",
                      S.N_SENTENCES: "10", S.CORPUS: "sentiment"})
    assert not [e.value for e in at.error]
    assert at.selectbox(key=S.SOURCE).value == "absa"
    assert at.selectbox(key=S.CATEGORY).value == "food"
    assert at.selectbox(key=S.COLOUR).options[:1] == ["role for the asked category"]
    want = input_representations(default_model, "", labelled=absa_input(default_model, row,
                                                                         "food"))
    got = lookups(at)[0]
    assert [r["token"] for r in got] == want.tokens
    roles = {r["token"]: r["group"] for r in got}
    assert (roles["pasta"], roles["delicious"], roles["waiter"]) == \
        ("aspect", "opinion", "other aspect")
    df = points(at)
    np.testing.assert_allclose(df[df["layer"] == 6].sort_values("item")[["x", "y"]],
                               want.points[6], atol=1e-5)
    reading = " ".join(m.value for m in at.markdown)
    assert "role for the asked category" in reading and "aspect term (pasta)" in reading
    # the category is in the URL; switching it recolours
    at.selectbox(key=S.CATEGORY).set_value("service").run()
    assert at.query_params[S.CATEGORY] == "service"
    roles = {r["token"]: r["group"] for r in lookups(at)[0]}
    assert (roles["waiter"], roles["friendly"], roles["pasta"]) == \
        ("aspect", "opinion", "other aspect")
    # the corpus part: the bundled sentiment corpus, words coloured by their review's label
    corpus = lookups(at)[1]
    assert {r["group"] for r in corpus} <= {"positive", "negative", "neutral", "conflict",
                                            "mixed"}
    assert frames(at, "accuracy")[0]["probe"].iloc[0] == "sentence's label"


def test_treebank_sentence_by_upos_and_the_colour_follows_the_input(default_model):
    row = dict(sample_treebank()[2])
    at = open_page(**{S.SOURCE: "treebank", S.EXAMPLE: row["id"], S.COLOUR: "segment",
                      S.N_SENTENCES: "10"})
    assert not [e.value for e in at.error]
    # "segment" is no option for a treebank sentence: the colour falls back to UPOS
    assert at.selectbox(key=S.COLOUR).value == "upos"
    li = treebank_input(default_model, row)
    got = lookups(at)[0]
    assert [r["group"] for r in got] == li.labels
    assert "part of speech (UPOS) from the treebank" in " ".join(m.value for m in at.markdown)
    at.selectbox(key=S.SOURCE).set_value("text").run()
    assert at.selectbox(key=S.COLOUR).options == ["segment (A / B)", "special tokens"]


def test_upload_without_a_label_column_is_refused_in_one_line():
    at = open_page(**{S.CORPUS: "upload", S.N_SENTENCES: "10"})
    at.file_uploader(key=S.UPLOAD).set_value(
        ("c.csv", b"text,topic\nThe soup was cold.,food\nSlow service.,service\n",
         "text/csv")).run()
    errs = [e.value for e in at.error]
    assert len(errs) == 1 and "no 'label' column" in errs[0] and "\n" not in errs[0]
