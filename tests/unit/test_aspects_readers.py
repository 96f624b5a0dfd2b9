"""ABSA readers: SemEval-2014/2016 XML, ASTE triplets, this project's JSON, the bundled
sample; the format sniffer."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from analysis.absa import readers as D
from analysis.absa.data import CATEGORIES, attach_opinions
from analysis.core.corpus.files import sniff_format
from analysis.core.errors import DataError
from test_aspects_data import assign_single_category

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"

SE14 = """<?xml version="1.0" encoding="UTF-8"?>
<sentences>
  <sentence id="1">
    <text>The pasta was great but the waiter was rude.</text>
    <aspectTerms>
      <aspectTerm term="pasta" polarity="positive" from="4" to="9"/>
      <aspectTerm term="waiter" polarity="negative" from="28" to="34"/>
    </aspectTerms>
    <aspectCategories>
      <aspectCategory category="food" polarity="positive"/>
      <aspectCategory category="service" polarity="negative"/>
    </aspectCategories>
  </sentence>
  <sentence id="2">
    <text>Cheap sushi.</text>
    <aspectTerms><aspectTerm term="sushi" polarity="positive" from="6" to="11"/></aspectTerms>
    <aspectCategories><aspectCategory category="food" polarity="positive"/></aspectCategories>
  </sentence>
</sentences>
"""

SE16 = """<?xml version="1.0" encoding="UTF-8"?>
<Reviews><Review rid="r1"><sentences>
  <sentence id="r1:0">
    <text>The wine was good but too expensive, and the place is noisy.</text>
    <Opinions>
      <Opinion target="wine" category="DRINKS#QUALITY" polarity="positive" from="4" to="8"/>
      <Opinion target="wine" category="DRINKS#PRICES" polarity="negative" from="4" to="8"/>
      <Opinion target="place" category="AMBIENCE#GENERAL" polarity="negative" from="45" to="50"/>
      <Opinion target="NULL" category="RESTAURANT#GENERAL" polarity="positive" from="0" to="0"/>
      <Opinion target="NULL" category="RESTAURANT#MISCELLANEOUS" polarity="negative" \
from="0" to="0"/>
    </Opinions>
  </sentence>
</sentences></Review></Reviews>
"""

ASTE = ("The food is great but the service was slow .####"
        "[([1], [3], 'POS'), ([6], [8], 'NEG')]\n")


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_semeval14_inline(tmp_path):
    ds = D.read_semeval14(write(tmp_path, "a.xml", SE14))
    assert len(ds) == 2 and ds.column_names == ["id", "text", "terms", "categories", "source"]
    row = ds[0]
    assert [(t["term"], t["start"], t["end"], t["polarity"]) for t in row["terms"]] == [
        ("pasta", 4, 9, "positive"), ("waiter", 28, 34, "negative")]
    assert row["categories"] == [{"category": "food", "polarity": "positive"},
                                 {"category": "service", "polarity": "negative"}]
    assert row["terms"][0]["category"] == ""  # SemEval-14 terms carry no category
    # a sentence with exactly one category gives its terms that category
    single = assign_single_category(ds)
    assert single[1]["terms"][0]["category"] == "food"
    assert single[0]["terms"][0]["category"] == ""


def test_semeval14_bad_offsets_are_named_and_can_be_skipped(tmp_path):
    bad = SE14.replace('from="6" to="11"', 'from="5" to="11"')
    path = write(tmp_path, "bad.xml", bad)
    with pytest.raises(DataError, match=r"Sentence 2: offsets 5-11 give ' sushi'"):
        D.read_semeval14(path)
    ds = D.read_semeval14(path, skip_invalid=True)
    assert len(ds) == 1 and ds.info.description == "skipped 1 invalid sentence(s)"


def test_semeval16_category_mapping_and_sentence_polarities(tmp_path):
    ds = D.read_semeval16(write(tmp_path, "b.xml", SE16))
    row = ds[0]
    assert [(t["term"], t["category"], t["polarity"]) for t in row["terms"]] == [
        ("wine", "food", "positive"), ("wine", "price", "negative"),
        ("place", "ambience", "negative")]
    cats = {c["category"]: c["polarity"] for c in row["categories"]}
    assert cats == {"food": "positive", "price": "negative", "ambience": "negative",
                    "anecdotes/miscellaneous": "conflict"}
    assert D.map_semeval16_category("FOOD#PRICES") == "price"
    assert D.map_semeval16_category("LOCATION#GENERAL") == "anecdotes/miscellaneous"
    with pytest.raises(DataError, match="Unknown SemEval-2016 category 'PARKING#GENERAL'"):
        D.map_semeval16_category("PARKING#GENERAL")


def test_xml_of_the_other_task_is_refused(tmp_path):
    with pytest.raises(DataError, match="not SemEval-2016"):
        D.read_semeval16(write(tmp_path, "a.xml", SE14))
    with pytest.raises(DataError, match="not SemEval-2014"):
        D.read_semeval14(write(tmp_path, "b.xml", SE16))
    with pytest.raises(DataError, match="not well-formed XML"):
        D.read_semeval14(write(tmp_path, "c.xml", "<sentences><sentence>"))
    assert sniff_format("a.xml", head=(tmp_path / "a.xml").read_bytes()) == "semeval14"
    assert sniff_format("b.xml", head=(tmp_path / "b.xml").read_bytes()) == "semeval16"


def test_aste_inline(tmp_path):
    ds = D.read_aste(write(tmp_path, "t.txt", ASTE))
    row = ds[0]
    assert [(t["term"], t["start"], t["end"], t["polarity"]) for t in row["terms"]] == [
        ("food", 4, 8, "positive"), ("service", 26, 33, "negative")]
    assert row["terms"][0]["opinions"] == [{"word": "great", "start": 12, "end": 17}]
    assert row["terms"][1]["opinions"] == [{"word": "slow", "start": 38, "end": 42}]
    with pytest.raises(DataError, match="line 1: not an ASTE triplet line"):
        D.read_aste(write(tmp_path, "u.txt", "just a sentence\n"))
    with pytest.raises(DataError, match="word index outside the sentence"):
        D.read_aste(write(tmp_path, "v.txt", "Good food .####[([7], [0], 'POS')]\n"))


def test_json_errors(tmp_path):
    good = {"sentences": [{"id": "a", "text": "Nice view.", "terms": [
        {"term": "view", "start": 5, "end": 9, "category": "ambience", "polarity": "positive",
         "opinions": [{"word": "Nice", "start": 0, "end": 4}]}],
        "categories": [{"category": "ambience", "polarity": "positive"}]}]}
    ds = D.read_json(write(tmp_path, "g.json", json.dumps(good)))
    assert ds[0]["terms"][0]["opinions"][0]["word"] == "Nice"
    bad = json.loads(json.dumps(good))
    bad["sentences"][0]["terms"][0]["category"] = "parking"
    with pytest.raises(DataError, match="unknown category 'parking'"):
        D.read_json(write(tmp_path, "b.json", json.dumps(bad)))
    unannotated = {"sentences": [good["sentences"][0], {"id": "b", "text": "We went."}]}
    with pytest.raises(DataError, match="sentence b has no annotated aspects"):
        D.read_json(write(tmp_path, "u.json", json.dumps(unannotated)))
    assert len(D.read_json(tmp_path / "u.json", skip_invalid=True)) == 1
    with pytest.raises(DataError, match="holds no sentences"):
        D.read_json(write(tmp_path, "e.json", '{"sentences": []}'))
    with pytest.raises(DataError, match="not valid JSON"):
        D.read_json(write(tmp_path, "x.json", "{"))


def test_bundled_sample_is_varied_and_up_to_date():
    ds = D.load_sample()
    assert len(ds) >= 200
    sys.path.insert(0, str(D.SAMPLE_PATH.parent))
    try:
        import build_sample
    finally:
        sys.path.pop(0)
    assert json.loads(D.SAMPLE_PATH.read_text(encoding="utf-8")) == build_sample.build()
    n_terms = [len(r["terms"]) for r in ds]
    assert min(n_terms) == 0 and max(n_terms) >= 2
    pols = {c["polarity"] for r in ds for c in r["categories"]}
    assert pols == {"positive", "negative", "neutral", "conflict"}
    assert {c["category"] for r in ds for c in r["categories"]} == set(CATEGORIES)
    assert sum(len(r["categories"]) > 1 for r in ds) >= 20
    assert any(" not " in f" {r['text']} " for r in ds)
    s012 = ds[11]
    assert s012["text"] == "The wine list is impressive but overpriced."
    assert [o["word"] for o in s012["terms"][0]["opinions"]] == ["impressive", "overpriced"]


def test_real_files(shared_data):
    se14 = D.read_semeval14(shared_data / "semeval2014" / "Restaurants_Train.xml")
    assert len(se14) == 3044
    assert se14[0]["text"] == "But the staff was so horrible to us."
    assert se14[0]["terms"][0]["term"] == "staff"
    path16 = shared_data / "semeval2016" / "ABSA16_Restaurants_Train_SB1_v2.xml"
    with pytest.raises(DataError, match="offsets"):
        D.read_semeval16(path16)  # this copy holds some sentences with broken offsets
    se16 = D.read_semeval16(path16, skip_invalid=True)
    # 57 OutOfScope sentences are not annotated and are left out
    assert len(se16) == 1843 and se16.info.description == "skipped 55 invalid sentence(s)"
    aste = D.read_aste(shared_data / "aste_v2_14res" / "train_triplets.txt")
    assert len(aste) == 1266
    linked = attach_opinions(assign_single_category(se14), aste)
    n = sum(1 for r in linked for t in r["terms"] if t["opinions"] and t["category"])
    assert n == 1243


def test_readers_take_bytes_and_a_missing_path_is_file_not_found(tmp_path):
    ds = D.load_absa(SE16.encode("utf-8"), name="upload.xml")
    assert ds[0]["source"] == "semeval16"
    assert len(D.read_aste(ASTE.encode("utf-8"), name="t.txt")) == 1
    with pytest.raises(FileNotFoundError):
        D.load_absa(tmp_path / "missing.xml")
    with pytest.raises(DataError, match="unknown data format"):
        D.load_absa(b"hello", name="x.txt")


def test_sniffing_reads_past_a_long_comment(tmp_path):
    comment = "<!-- " + "copyright notice " * 300 + "-->\n"
    s14 = SE14.replace("?>\n", "?>\n" + comment, 1).encode()
    s16 = SE16.replace("?>\n", "?>\n" + comment, 1).encode()
    assert s16.index(b"<Reviews") > 4000
    assert sniff_format("a.xml", head=s14) == "semeval14"
    assert sniff_format("b.xml", head=s16) == "semeval16"
    assert len(D.load_absa(s16, name="b.xml")) == 1
    assert len(D.load_absa(s14, name="a.xml")) == 2
    assert sniff_format("t.txt", head=b"\n\n" + ASTE.encode()) == "aste"


def test_sentences_over_the_character_cap_are_skipped_and_counted(tmp_path):
    long = "word " * 30
    se14 = SE14.replace("<text>Cheap sushi.</text>", f"<text>{long}</text>")
    ds = D.read_semeval14(se14.encode(), name="a.xml", max_chars=100)
    assert ds["id"] == ["1"]
    assert ds.info.description == "Skipped 1 sentence(s) longer than 100 characters."
    ds = D.read_aste((ASTE + long + "####[([0], [1], 'POS')]\n").encode(), name="t.txt",
                     max_chars=100)
    assert len(ds) == 1 and "Skipped 1 sentence(s)" in ds.info.description
    sample = json.loads(D.SAMPLE_PATH.read_text(encoding="utf-8"))
    n = len(sample["sentences"])
    sample["sentences"][0]["text"] = long * 10
    ds = D.load_absa(json.dumps(sample).encode(), name="s.json", max_chars=1000)
    assert len(ds) == n - 1
    assert ds.info.description == "Skipped 1 sentence(s) longer than 1,000 characters."
    with pytest.raises(DataError, match="Every sentence is longer than 10 characters"):
        D.read_semeval16(SE16.encode(), name="b.xml", max_chars=10)
