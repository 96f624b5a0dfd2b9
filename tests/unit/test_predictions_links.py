"""The Predictions page's links of a row (ui.predictions.links): Head importance opens its
per-example view with the row carried (text, pair and gold label; an ABSA row's review and
aspect), and says why where it cannot (a QA-B / NLI-B row is five inputs)."""

from __future__ import annotations

from types import SimpleNamespace
from urllib.parse import parse_qs, urlparse

import numpy as np

from analysis.absa.tasks import LABELS
from ui.importance import state as I
from ui.predictions.links import importance_link, study_links


def _query(url: str) -> dict:
    return {k: v[0] for k, v in parse_qs(urlparse(url).query).items()}


def test_a_plain_row_carries_its_text_pair_and_label():
    got = _query(importance_link("example", "is it good?", "the soup was cold", "neg"))
    assert got == {I.SCOPE: I.ONE, I.MODEL: I.EXAMPLE, I.TEXT: "is it good?",
                   I.PAIR: "the soup was cold", I.LABEL: "neg"}


def _absa(task: str):
    return SimpleNamespace(texts=["the pasta was cold", "nice staff"],
                           pairs=["food", "service"], absa=True, task=task,
                           categories=["food", "service"], reviews=["the pasta was cold",
                                                                    "nice staff"],
                           gold=np.array([2, 0]), classes=LABELS, sentence=np.array([3, 4]))


def test_an_absa_row_carries_its_review_aspect_and_gold_label():
    links = {x.page: x for x in study_links("example", _absa("nli_m"), 0, "elsewhere", 6)}
    imp = links["Head importance"]
    assert imp.why == ""
    assert _query(imp.url) == {I.SCOPE: I.ONE, I.MODEL: I.EXAMPLE, I.TEXT: "the pasta was cold",
                               I.ASPECT: "food", I.LABEL: "negative"}


def test_a_binary_task_row_says_why_it_has_no_link():
    links = {x.page: x for x in study_links("example", _absa("qa_b"), 1, "elsewhere", 6)}
    assert links["Head importance"].url is None
    assert "five" in links["Head importance"].why
