"""The bundled sample treebank (data/treebank/sample.conllu) is valid UD v2 CoNLL-U: read with the
`conllu` library on its own (independently of analysis.syntax), every sentence checked."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import conllu
import pytest

PATH = Path(__file__).resolve().parents[2] / "data" / "treebank" / "sample.conllu"

# https://universaldependencies.org/u/dep/ (the 37 universal relations of UD v2)
UD_RELATIONS = {
    "acl", "advcl", "advmod", "amod", "appos", "aux", "case", "cc", "ccomp", "clf", "compound",
    "conj", "cop", "csubj", "dep", "det", "discourse", "dislocated", "expl", "fixed", "flat",
    "goeswith", "iobj", "list", "mark", "nmod", "nsubj", "nummod", "obj", "obl", "orphan",
    "parataxis", "punct", "reparandum", "root", "vocative", "xcomp",
}
# https://universaldependencies.org/u/pos/ (the 17 UPOS tags)
UPOS = {"ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON",
        "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X"}
MINIMUM = {"det": 30, "nsubj": 30, "obj": 30, "case": 30, "nmod:poss": 15}


@pytest.fixture(scope="module")
def text() -> str:
    return PATH.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def sentences(text):
    return conllu.parse(text)


def _data_lines(text: str) -> list[list[str]]:
    return [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]


def test_every_line_has_ten_columns(text):
    rows = _data_lines(text)
    assert len(rows) > 800
    bad = [r for r in rows if len(r) != 10]
    assert not bad, bad[:3]
    # DEPS is not annotated; XPOS and FEATS are "_" or filled
    assert {r[8] for r in rows} == {"_"}
    assert {r[9] for r in rows} <= {"_", "SpaceAfter=No"}
    assert text.endswith("\n\n") and "\n\n\n" not in text


def test_at_least_80_sentences_with_ids_and_text(sentences):
    assert len(sentences) >= 80
    ids = [s.metadata.get("sent_id") for s in sentences]
    assert all(ids) and len(set(ids)) == len(ids)
    assert all(s.metadata.get("text") for s in sentences)


def test_ids_run_from_1_to_n(sentences):
    for s in sentences:
        assert [t["id"] for t in s] == list(range(1, len(s) + 1)), s.metadata["sent_id"]


def test_one_root_heads_inside_and_a_tree(sentences):
    for s in sentences:
        sid, n = s.metadata["sent_id"], len(s)
        heads = {t["id"]: t["head"] for t in s}
        roots = [t for t in s if t["head"] == 0]
        assert len(roots) == 1, sid
        assert roots[0]["deprel"] == "root", sid
        assert [t for t in s if t["deprel"] == "root"] == roots, sid
        for t in s:
            assert isinstance(t["head"], int) and 0 <= t["head"] <= n, (sid, t["form"])
            assert t["head"] != t["id"], (sid, t["form"])
        # every word reaches the root without passing a word twice: no cycle
        for i in heads:
            seen, j = set(), i
            while j != 0:
                assert j not in seen, f"{sid}: cycle through word {j}"
                seen.add(j)
                j = heads[j]


def test_relations_and_tags_are_ud_v2(sentences):
    for s in sentences:
        for t in s:
            base, _, sub = t["deprel"].partition(":")
            assert base in UD_RELATIONS, (s.metadata["sent_id"], t["deprel"])
            assert sub == "" or sub.isalpha(), t["deprel"]
            assert t["upos"] in UPOS, (s.metadata["sent_id"], t["upos"])
            assert t["lemma"] and t["lemma"] != "_", (s.metadata["sent_id"], t["form"])


def test_text_is_the_forms_joined_with_their_spacing(sentences):
    for s in sentences:
        joined = ""
        for k, t in enumerate(s):
            joined += t["form"]
            no_space = (t["misc"] or {}).get("SpaceAfter") == "No"
            if k < len(s) - 1 and not no_space:
                joined += " "
        assert joined == s.metadata["text"], s.metadata["sent_id"]


def test_the_studied_relations_occur_often_enough(sentences):
    counts = Counter(t["deprel"] for s in sentences for t in s)
    for rel, least in MINIMUM.items():
        assert counts[rel] >= least, (rel, counts[rel])
    # the page's default relations all pass its default minimum count on the sample (10)
    for rel in ("amod", "advmod", "obl", "compound", "aux", "conj", "cc", "mark", "punct"):
        assert counts[rel] >= 10, (rel, counts[rel])


def test_readme_counts_match_the_file(sentences):
    readme = (PATH.parent / "README.md").read_text(encoding="utf-8")
    counts = Counter(t["deprel"] for s in sentences for t in s)
    for rel, n in counts.items():
        assert f"| `{rel}` | {n} |" in readme, rel
    assert f"{len(sentences)} sentences" in readme
