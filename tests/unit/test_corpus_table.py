"""The corpus table's fingerprint."""

from __future__ import annotations

from analysis.core.corpus import (corpus_fingerprint, read_pasted)


def test_fingerprint_tracks_content():
    a = read_pasted("one\ntwo")
    assert corpus_fingerprint(a) == corpus_fingerprint(read_pasted("one\n\ntwo\n"))
    assert corpus_fingerprint(a) != corpus_fingerprint(read_pasted("one\ttwo"))
    assert corpus_fingerprint(a) != corpus_fingerprint(read_pasted("one\ntwo."))
