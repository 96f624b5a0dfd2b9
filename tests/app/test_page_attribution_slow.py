"""AppTest of the Attribution page's question before a slow method (issue 30): with one forward
timed at 1 s (patched, so the estimate is known: value zeroing 0.95 n (126 / n)^0.3 forwards,
integrated gradients 3.5 * 50 + 2), the page holds both back, says how long they would take,
shows the other methods, and runs them when the visitor presses the button, with the library's
numbers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from analysis.attribution import attribute, cost, load_for_attribution
from attribution_models import tiny_classifier_dir

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TEXT = "The slow soup arrived late but the waiter was kind about it"


def rows_html(at) -> str:
    return " ".join(m.value for m in at.markdown if "attr-rows" in m.value)


def test_slow_methods_wait_for_the_visitor(monkeypatch, tmp_path_factory):
    import ui.common.frame.sidebar

    folder = tiny_classifier_dir(tmp_path_factory)
    monkeypatch.setattr(ui.common.frame.sidebar, "leave_legacy_navigation", lambda: None,
                        raising=False)
    monkeypatch.setattr(cost, "time_forward", lambda loaded, enc: 1.0)
    at = AppTest.from_file(APP, default_timeout=240)
    for k, v in dict(src="Local folder", model=str(folder), mode="Sentence pair", a=TEXT,
                     b="service", attr_model="The sidebar's model").items():
        at.query_params[k] = v
    at.run()
    at.switch_page("pages/attribution.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]

    loaded = load_for_attribution(str(folder))
    ref = attribute(loaded, TEXT, "service")
    n = ref.n_tokens
    vz = 0.95 * n * (126 / n) ** 0.3
    assert vz > 10  # value zeroing's estimate (vz s) is over the 10 s limit
    words = cost.duration_words(vz + 3.5 * 50 + 2)
    asks = [i.value for i in at.info if "would take" in i.value]
    assert len(asks) == 1
    assert asks[0].startswith(f"Value zeroing and Integrated gradients would take {words}")
    held = rows_html(at)
    assert "ALTI" in held and "Integrated gradients" not in held and "Value zeroing" not in held
    assert "Gradient x input" not in held  # it comes with integrated gradients
    button = at.button(key="attr-run-slow")
    assert button.label == f"Run Value zeroing and Integrated gradients too ({words})"

    button.click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [i.value for i in at.info if "would take" in i.value]
    rows = rows_html(at)
    assert "Integrated gradients" in rows and "Value zeroing" in rows
    from ui.common.html import esc

    for tok, v in zip(ref.tokens, ref.methods["integrated_gradients"].input):
        assert f"title='{esc(tok)}: {v:.4f}'" in rows
    assert np.isfinite(ref.methods["value_zeroing"].input).all()
