"""The attention component's one payload contract (analysis/attention/payload_spec.py): the
producer's payloads satisfy it key for key, the Python check (ui/common/attention/contract.py)
and the JavaScript check (frontend/payload.js, reading the generated payload_spec.js) refuse a
payload missing any required key with the same sentence, the generated modules equal a fresh
generation and the committed esbuild bundle equals a fresh build (skipped without esbuild)."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from analysis.attention import payload_spec as spec
from attention_payloads import hand_made_payloads, js_problems, without_each_required_key
from ui.common.attention import build
from ui.common.attention.contract import check_payload, generated, payload_problem

NODE = shutil.which("node")


def test_generated_modules_equal_a_fresh_generation():
    for name, text in generated().items():
        kept = (build.FRONTEND / name).read_text(encoding="utf-8")
        assert kept == text, f"frontend/{name} is stale: run python -m ui.common.attention.build"
    js = generated()["payload_spec.js"]
    body = js[js.index("export const PAYLOADS = ") + len("export const PAYLOADS = "):]
    assert json.loads(re.sub(r",(\s*[\]}])", r"\1", body.rstrip().rstrip(";"))) == spec.as_json()


def test_the_contract_is_what_the_producer_makes_key_for_key():
    payloads = hand_made_payloads()
    encodings = [p["encoding"] for k, p in payloads if k != "model"]
    assert encodings == ["dense", "sparse", "dense", "sparse", "dense"]
    for kind, payload in payloads:
        assert payload_problem(payload, kind) is None, (kind, payload_problem(payload, kind))
        fields = {f.name: f for f in spec.PAYLOADS[kind].fields}
        # every key made is declared; every declared key it needs is made
        assert set(payload) <= set(fields), set(payload) - set(fields)
        needed = {f.name for f in fields.values()
                  if (f.required and not (f.unless and f.unless in payload))
                  or (f.when and payload.get(f.when[0]) == f.when[1])}
        assert needed <= set(payload)
    sparse = payloads[1][1]
    assert set(sparse["layers"][0]) == {"counts", "keys", "weights", "n_edges"}
    assert set(payloads[0][1]["layers"][0]) == {"weights"}
    assert spec.PAYLOADS["views"].names(required_only=True) == [
        "view", "version", "n_layers", "n_heads", "n", "labels", "segments", "special",
        "is_pair", "scale", "size", "pool", "thumbs", "encoding", "top_k", "layers", "digest"]


def test_python_refuses_a_payload_missing_any_required_key():
    payloads = hand_made_payloads()
    cases = list(without_each_required_key(payloads))
    # views, views with a heatmap, head, head, model, views with only a heatmap
    assert len(cases) == 15 + 13 + 14 + 14 + 7 + 13
    for kind, name, payload in cases:
        maker = spec.PAYLOADS[kind].maker
        with pytest.raises(ValueError) as err:
            check_payload(payload, kind)
        assert str(err.value) == f"The payload of analysis.attention.views.{maker} lacks {name}."
    # a sparse layer without its keys, a heatmap without its maximum, a null digest
    sparse = payloads[1][1]
    broken = {**sparse, "layers": [{k: v for k, v in sparse["layers"][0].items() if k != "keys"},
                                   *sparse["layers"][1:]]}
    assert payload_problem(broken, "views").endswith("lacks layers[0].keys.")
    heat = {k: v for k, v in sparse["heatmap"].items() if k != "max"}
    assert payload_problem({**sparse, "heatmap": heat}, "views").endswith("lacks heatmap.max.")
    assert payload_problem({**sparse, "digest": None}, "views").endswith("lacks digest.")
    assert payload_problem({**sparse, "top_k": None}, "views") is None  # nullable
    # layers and thumbnails may be left out only beside a heatmap (the long-input heatmap)
    only_heatmap = payloads[5][1]
    assert "layers" not in only_heatmap and payload_problem(only_heatmap, "views") is None
    assert payload_problem({k: v for k, v in only_heatmap.items() if k != "heatmap"},
                           "views").endswith("lacks thumbs, layers.")
    assert payload_problem({**sparse, "segments": [0, 1, 2] + [0] * 17}, "views").endswith(
        "has segments 2, not 0, 1.")
    assert payload_problem({**sparse, "is_pair": 1}, "views").endswith(
        "has is_pair of another type than bool.")


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_javascript_refuses_what_python_refuses_with_the_same_sentence():
    payloads = hand_made_payloads()
    sparse = payloads[1][1]
    odd = [("views", {**sparse, "labels": sparse["labels"][:4]}),
           ("views", {**sparse, "encoding": "zip"}),
           ("views", {**sparse, "layers": sparse["layers"][:1]}),
           ("head", {**payloads[2][1], "highlight": ["1"]}),
           ("model", {**payloads[4][1], "scale": 100})]
    cases = payloads + [(k, p) for k, _, p in without_each_required_key(payloads)] + odd
    got = js_problems(cases)
    want = [payload_problem(p, k) for k, p in cases]
    assert got == want
    assert got[:6] == [None] * 6 and all(got[6:])
    assert got[-5:] == [
        "The payload of analysis.attention.views.views_payload has 4 labels for 20 tokens.",
        'The payload of analysis.attention.views.views_payload has encoding "zip", not '
        '"dense", "sparse".',
        "The payload of analysis.attention.views.views_payload has 1 layers for 2 layers.",
        "The payload of analysis.attention.views.head_view_payload has an item of highlight "
        "of another type than int.",
        "The payload of analysis.attention.views.model_view_payload has scale 100, not 255."]


def test_package_pins_esbuild_exactly_and_builds_as_python_does():
    package = json.loads((build.FRONTEND / "package.json").read_text(encoding="utf-8"))
    pin = package["devDependencies"]["esbuild"]
    assert re.fullmatch(r"0\.28\.\d+", pin), pin
    lock = json.loads((build.FRONTEND / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["packages"]["node_modules/esbuild"]["version"] == pin
    script = package["scripts"]["build"].split()
    assert script == ["esbuild", *build.ENTRIES, *build.OPTIONS, "--outdir=dist"]


@pytest.mark.skipif(not build.esbuild_available(),
                    reason="esbuild is not installed (npm ci in ui/common/attention/frontend)")
def test_committed_bundle_equals_a_fresh_build():
    assert build.stale() == [], "run: python -m ui.common.attention.build"
