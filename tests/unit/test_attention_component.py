"""The Attention component's owner (ui/attention/component.py): the constants JavaScript shares
with Python, the committed esbuild bundle, the checked payload contract, the reducer of reported
state, the URL values (ui/attention/state.py), and the payload decoded by the JavaScript itself.
The contract itself and the bundle's freshness: tests/unit/test_attention_contract.py."""

from __future__ import annotations

import importlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from analysis.attention.views import views_payload
from ui.attention import state
from ui.attention.component import reduce_report
from ui.common.attention.build import DIST, ENTRIES, FRONTEND
from ui.common.attention.contract import SEGMENTS, STATE_KEYS, check_payload, constants_js

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")
DIMS = state.Dims(6, 12, 9)


def test_constants_module_is_the_one_python_generates():
    text = (FRONTEND / "constants.js").read_text(encoding="utf-8")
    assert text == constants_js(), "run: python -m ui.common.attention.build"
    assert 'export const SEGMENTS = ["All", "A->A", "B->B", "A->B", "B->A"];' in text
    assert "export const VIEWS_VERSION = 2;" in text and "export const PAYLOAD_VERSION = 1;" in text


def test_js_modules_are_small_es_modules():
    files = sorted(FRONTEND.glob("*.js"))
    assert len(files) >= 12
    for path in files:
        src = path.read_text(encoding="utf-8")
        assert len(src.splitlines()) <= 300, path.name
        assert re.search(r"^export ", src, re.M), f"{path.name} exports nothing"


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize("entry, main", [("views.js", "viewsMain"),
                                         ("head_view_single.js", "headViewMain"),
                                         ("model_view.js", "modelViewMain")])
def test_committed_bundles_are_modules_whose_default_is_the_entry(tmp_path, entry, main):
    """What Streamlit loads: one ES module per component (no import left), its default export the
    entry's main function."""
    assert entry in ENTRIES
    js = (DIST / entry).read_text(encoding="utf-8")
    assert not re.search(r"^import ", js, re.M)
    out = tmp_path / f"{main}.mjs"
    out.write_text(js, encoding="utf-8")
    probe = tmp_path / "probe.mjs"
    probe.write_text(f'const m = await import("./{main}.mjs");\n'
                     f"console.log(m.default === m.{main}, m.default.name);\n", encoding="utf-8")
    run = subprocess.run([NODE, str(probe)], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["true", main]


def _payload(n: int = 5, sparse: bool = False) -> dict:
    rng = np.random.default_rng(3)
    maps = rng.random((2, 3, n, n)).astype(np.float32)
    maps /= maps.sum(-1, keepdims=True)
    args = ([f"t{i}" for i in range(n)], maps, np.arange(n) * 2 // n, np.zeros(n, bool))
    dense = views_payload(*args, is_pair=True)
    if not sparse:
        return dense
    # a budget the dense layers do not fit: the strongest keys of every row only
    return views_payload(*args, is_pair=True, budget=len(json.dumps(dense)) - 3000)


def test_payload_schema_is_checked_and_its_messages_name_real_functions():
    payload = _payload()
    check_payload(payload, "views")  # passes
    with pytest.raises(ValueError, match=r"draws version 2 of analysis\.attention\.views\."
                                         r"views_payload's payload, got 1"):
        check_payload({**payload, "version": 1}, "views")
    with pytest.raises(ValueError, match=r"needs a payload from analysis\.attention\.views\."
                                         r"head_view_payload \(got view 'views'\)"):
        check_payload(payload, "head")
    with pytest.raises(ValueError, match="lacks digest"):
        check_payload({k: v for k, v in payload.items() if k != "digest"}, "views")
    with pytest.raises(ValueError, match="has 4 labels for 5 tokens"):
        check_payload({**payload, "labels": payload["labels"][:4]}, "views")
    # every function a message names exists: the contract's makers, as the JavaScript reads them
    py = (ROOT / "analysis/attention/payload_spec.py").read_text(encoding="utf-8")
    js = (FRONTEND / "payload_spec.js").read_text(encoding="utf-8")
    named = set(re.findall(r'"(\w+_payload)"', py))
    assert named == set(re.findall(r'"(\w+_payload)"', js))
    assert named == {"views_payload", "head_view_payload", "model_view_payload"}
    assert '"analysis.attention.views"' in py and '"analysis.attention.views"' in js
    views = importlib.import_module("analysis.attention.views")
    assert all(callable(getattr(views, name)) for name in named)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize("sparse", [False, True])
def test_javascript_decodes_pythons_payload(sparse):
    """The JavaScript's decodeEdges of a dense and of a sparse payload gives the 8-bit weights
    Python sent, cell for cell; a payload of another version is refused there too."""
    n = 40
    payload = _payload(n, sparse)
    assert payload["encoding"] == ("sparse" if sparse else "dense")
    assert not sparse or 1 <= payload["top_k"] < n
    helper = ROOT / "tests/js/decode_payload.mjs"
    run = subprocess.run([NODE, str(helper)], input=json.dumps(payload), capture_output=True,
                         text=True, check=True)
    out = json.loads(run.stdout)
    assert out["problem"] is None and len(out["layers"]) == 2
    from test_attention_views import decode_views_payload

    want = np.rint(decode_views_payload(payload) * 255).astype(int)  # [L, H, n, n]
    for l, layer in enumerate(out["layers"]):
        got = np.zeros((3 * n, n), int)
        starts = layer["rowStart"]
        for r in range(3 * n):
            for e in range(starts[r], starts[r + 1]):
                got[r, layer["keys"][e]] = layer["wts"][e]
        np.testing.assert_array_equal(got.reshape(3, n, n), want[l])
    run = subprocess.run([NODE, str(helper)], input=json.dumps({**payload, "version": 3}),
                         capture_output=True, text=True, check=True)
    assert "version 2 of analysis.attention.views.views_payload, got 3" in json.loads(
        run.stdout)["problem"]


def test_reducer_turns_a_report_into_widgets_and_url():
    full = {"view": "head", "layer": 5, "heads": [0, 2, 11], "pin": {"side": "to", "index": 3},
            "segment": "A->B"}
    f = reduce_report(full, {}, DIMS)
    assert (f.view, f.layer, f.head) == ("Head view", 6, None)
    assert f.params == {"heads": "1,3,12", "pin": "to:4", "seg": "A->B"}
    one = reduce_report({**full, "view": "model", "heads": [4], "pin": {"side": "from",
                                                                         "index": 0}}, {}, DIMS)
    assert (one.view, one.head, one.params["heads"], one.params["pin"]) == ("Model view", 5,
                                                                              "5", "1")
    # back to every head, no pin, all segments: the parameters leave the URL
    none = reduce_report({**full, "heads": None, "pin": None, "segment": "All"}, {}, DIMS)
    assert none.params == {"heads": None, "pin": None, "seg": None}


def test_reducer_takes_only_the_changed_keys_and_refuses_impossible_values():
    late = {"view": "head", "layer": 4, "heads": None, "pin": None, "segment": "All",
            "changed": ["layer"]}
    assert reduce_report(late, {}, DIMS) == (None, 5, None, {})
    asked = {"view": "head", "layer": 0, "heads": None, "pin": None, "segment": "All"}
    assert reduce_report({**asked, "segment": "B->B"}, asked, DIMS) == (None, None, None,
                                                                          {"seg": "B->B"})
    bad = {"view": "nope", "layer": 99, "heads": [40], "pin": {"side": "to", "index": 999},
           "segment": "sideways"}
    assert reduce_report(bad, asked, DIMS) == (None, None, None,
                                               {"heads": None, "pin": None, "seg": None})
    assert STATE_KEYS == ["view", "layer", "heads", "pin", "segment"]  # the reported keys


def test_url_values_round_trip():
    assert state.heads_from_url("3,1,3", 12) == [0, 2]
    for bad in ("0,13", "x", "", "1,,2"):
        assert state.heads_from_url(bad, 12) is None, bad
    assert state.heads_to_url([11, 0]) == "1,12" and state.heads_to_url(None) is None
    assert state.pin_from_url("4", 9) == {"side": "from", "index": 3}
    assert state.pin_from_url("to:9", 9) == {"side": "to", "index": 8}
    for bad in ("10", "up:2", "-1", "to:0", "to:", ""):
        assert state.pin_from_url(bad, 9) is None, bad
    for pin in ({"side": "from", "index": 0}, {"side": "to", "index": 5}):
        assert state.pin_from_url(state.pin_to_url(pin), 9) == pin
    assert [state.segment_from_url(s, SEGMENTS) for s in ("B->A", "A->C")] == ["B->A", "All"]
    assert state.segment_to_url("All") is None and state.segment_to_url("A->A") == "A->A"
