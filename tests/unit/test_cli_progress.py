"""analysis/cli/progress.py: no bar when stderr is not a terminal; a bar whose total follows the
library's callback when it is."""

from __future__ import annotations

import io

from analysis.cli import progress


def test_no_bar_off_a_terminal(monkeypatch):
    monkeypatch.setattr(progress.sys, "stderr", io.StringIO())
    with progress.progress_bar(10) as update:
        assert update is None


def test_the_bar_follows_the_callback(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    err = Terminal()
    monkeypatch.setattr(progress.sys, "stderr", err)
    with progress.progress_bar(10, unit="ex") as update:
        update(3, 10)
        update(7, 20)  # the total grows with the callback's
    text = err.getvalue()
    assert "7/20" in text and "ex" in text


def test_a_study_bar_shows_the_fraction_and_the_study_s_words(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(progress.sys, "stderr", io.StringIO())
    with progress.study_bar() as told:
        assert told is None
    err = Terminal()
    monkeypatch.setattr(progress.sys, "stderr", err)
    with progress.study_bar() as told:
        told(0.25, "3 / 12 examples")
        told(0.5, "6 / 12 examples")
    text = err.getvalue()
    assert "50/100" in text and "6 / 12 examples" in text
