"""The XML helper: SemEval review sentences, malformed XML, entity bombs, other schemas."""

from __future__ import annotations

import pytest

from analysis.core.corpus import (corpus_notes, read_corpus)
from analysis.core.errors import DataError
from builders import one_line


SEMEVAL14 = """<?xml version="1.0" encoding="UTF-8"?>
<sentences>
  <sentence id="1"><text>But the staff was so horrible to us.</text>
    <aspectTerms><aspectTerm term="staff" polarity="negative" from="8" to="13"/></aspectTerms>
  </sentence>
  <sentence id="2"><text>The food was great &amp; cheap.</text></sentence>
  <sentence id="3"><text>  </text></sentence>
</sentences>"""

SEMEVAL16 = """<Reviews><Review rid="1"><sentences>
  <sentence id="1:0"><text>Judging from posts this used to be good.</text>
    <Opinions><Opinion target="NULL" category="RESTAURANT#GENERAL" polarity="negative"/></Opinions>
  </sentence>
  <sentence id="1:1"><text>The staff acted rude.</text></sentence>
</sentences></Review></Reviews>"""


def test_semeval_xml(tmp_path):
    f = tmp_path / "s14.xml"
    f.write_text(SEMEVAL14, encoding="utf-8")
    ds = read_corpus(f)
    assert ds["text"] == ["But the staff was so horrible to us.", "The food was great & cheap."]
    assert corpus_notes(ds) == ["Skipped 1 empty sentence(s)."]
    g = tmp_path / "s16.xml"
    g.write_text(SEMEVAL16, encoding="utf-8")
    assert read_corpus(g)["text"] == ["Judging from posts this used to be good.",
                                      "The staff acted rude."]


def test_xml_malformed_bomb_and_wrong_schema(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<sentences><sentence><text>open", encoding="utf-8")
    with pytest.raises(DataError) as exc:
        read_corpus(bad)
    assert "not well-formed" in one_line(exc)
    bomb = tmp_path / "bomb.xml"
    bomb.write_text(
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
        '<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>'
        "<sentences><sentence><text>&lol2;</text></sentence></sentences>", encoding="utf-8")
    with pytest.raises(DataError) as exc:
        read_corpus(bomb)
    assert "entit" in one_line(exc)
    other = tmp_path / "other.xml"
    other.write_text("<root><item>hello</item></root>", encoding="utf-8")
    with pytest.raises(DataError) as exc:
        read_corpus(other)
    assert "<sentence><text>" in one_line(exc)


def test_real_semeval_files(shared_data):
    ds = read_corpus(shared_data / "semeval2014" / "Restaurants_Train.xml")
    assert len(ds) == 3044
    assert ds["text"][0] == "But the staff was so horrible to us."
    ds16 = read_corpus(shared_data / "semeval2016" / "ABSA16_Restaurants_Train_SB1_v2.xml",
                       max_examples=5)
    assert ds16["text"][0] == ("Judging from previous posts this used to be a good place, "
                               "but not any longer.")


def test_xml_is_streamed_past_a_long_prolog(tmp_path):
    f = tmp_path / "s.xml"
    f.write_text('<?xml version="1.0"?>\n<!-- ' + "licence " * 1000 + "-->\n" + SEMEVAL14[38:],
                 encoding="utf-8")
    assert read_corpus(f)["text"] == ["But the staff was so horrible to us.",
                                     "The food was great & cheap."]
