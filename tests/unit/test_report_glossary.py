"""analysis/report/glossary.py: the terms a text uses, whole words only, in the glossary's order."""

from __future__ import annotations

from analysis.report.glossary import GLOSSARY, terms_in


def test_terms_in_whole_words_in_glossary_order():
    assert terms_in("The query token of one segment.") == [
        t for t in GLOSSARY if t in ("token", "query token", "segment")]
    assert list(GLOSSARY).index("token") < list(GLOSSARY).index("segment")
    assert terms_in("segments of a Spearman correlation") == [
        t for t in GLOSSARY if t == "Spearman correlation"]  # "segments" is not "segment"
    assert terms_in("nothing here") == []
    assert all(isinstance(v, str) and v.endswith(".") for v in GLOSSARY.values())
