"""AppTest of the app and the Attention page: deep links, every view, exact values, bad input."""

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from analysis.attention import attention_for, level_view
from apptest_util import chart_frames
from ui.errors import plain
from ui.sidebar import EXAMPLE_A, EXAMPLE_B

XSS = "<img src=x onerror=alert(1)>"


def open_app(**params) -> AppTest:
    at = AppTest.from_file("../app.py", default_timeout=180)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def component_payload(at, name="attention_head_view") -> dict:
    comps = [c for c in at.get("bidi_component") if c.proto.component_name == name]
    assert comps, f"component {name} not rendered"
    return json.loads(comps[0].proto.json)


def test_app_opens_on_head_view_with_example(default_model):
    at = open_app()
    assert at.title[0].value == "Attention"
    cards = [m.value for m in at.sidebar.markdown if "model-card" in m.value]
    assert "6 layers &times; 12 heads" in cards[0] and "22.7M parameters" in cards[0]
    payload = component_payload(at)
    ref = attention_for(default_model, EXAMPLE_A)
    assert payload["labels"] == ref.encoding.tokens
    assert payload["layer"] == 0 and payload["n_heads"] == 12
    chips = [m.value for m in at.markdown if "class='tokens'" in m.value][0]
    assert chips.count("tok sp") == 2  # [CLS] and [SEP] shown as structure


def test_deep_link_heatmap_shows_the_models_map(default_model):
    at = open_app(mode="Sentence pair", view="Heatmap", layer="3", head="5")
    assert at.selectbox(key="layer").value == 3 and at.selectbox(key="head").value == 5
    df = chart_frames(at)[0].sort_values(["from_pos", "to_pos"])
    ref = attention_for(default_model, EXAMPLE_A, EXAMPLE_B).attentions[2, 4]
    np.testing.assert_allclose(df["weight"].to_numpy().reshape(ref.shape), ref, atol=1e-6)
    labels = [b.label for b in at.get("download_button")]
    assert labels == ["PNG", "SVG", "CSV"]


def test_word_level_without_specials_pair(default_model):
    at = open_app(mode="Sentence pair", view="Heatmap", level="word", nospecial="true",
                  layer="4", head="3")
    df = chart_frames(at)[0]
    ref = attention_for(default_model, EXAMPLE_A, EXAMPLE_B)
    labels, maps, _, _ = level_view(ref, "word", hide_special=True)
    assert "[CLS]" not in set(df["from"]) and "[SEP]" not in set(df["to"])
    assert set(df["from"]) == set(labels)
    sums = df.groupby("from_pos")["weight"].sum().to_numpy()
    np.testing.assert_allclose(sums, 1.0, atol=1e-5)
    grid = df.sort_values(["from_pos", "to_pos"])["weight"].to_numpy()
    np.testing.assert_allclose(grid.reshape(maps[3, 2].shape), maps[3, 2], atol=1e-6)


def test_head_view_pair_segments_and_layer(default_model):
    at = open_app(mode="Sentence pair", layer="2")
    payload = component_payload(at)
    ref = attention_for(default_model, EXAMPLE_A, EXAMPLE_B)
    assert payload["layer"] == 1
    assert payload["segments"] == ref.encoding.segments.tolist()
    assert 1 in payload["segments"]


def test_neuron_view_softmax_matches_attention(default_model):
    at = open_app(view="Neuron view", layer="2", head="4")
    ref = attention_for(default_model, EXAMPLE_A).attentions[1, 3, 1]  # query token 2 default
    frames = [f for f in chart_frames(at) if "softmax" in f.columns]
    assert frames, "softmax chart missing"
    np.testing.assert_allclose(frames[0]["softmax"].to_numpy(), ref, atol=1e-5)
    np.testing.assert_allclose(frames[0]["model_attention"].to_numpy(), ref, atol=1e-6)
    # every chart of the view downloads: query, keys, products, scores (PNG, SVG, CSV each)
    keys = [b.key for b in at.get("download_button")]
    for part in ("neuron-q-dl", "neuron-keys-dl", "neuron-products-dl", "neuron-dl"):
        assert [k for k in keys if k.startswith(part + "-")] == [
            f"{part}-png", f"{part}-svg", f"{part}-csv"], keys


def test_model_view_grid_and_click_opens_heatmap():
    at = open_app(view="Model view")
    payload = component_payload(at, "attention_model_view")
    assert (payload["n_layers"], payload["n_heads"]) == (6, 12)
    at.session_state["_attention_pending_head"] = (2, 4)  # what a click on layer 3 head 5 sets
    at.run()
    assert not at.exception
    assert at.selectbox(key="layer").value == 3 and at.selectbox(key="head").value == 5
    assert at.get("vega_lite_chart"), "clicked head did not open in the heatmap"


def test_markup_in_text_is_data_not_html():
    at = open_app(a=XSS)
    payload = component_payload(at)
    assert "<" in "".join(payload["labels"])  # raw text goes to the view, drawn as text nodes
    chips = [m.value for m in at.markdown if "class='tokens'" in m.value][0]
    assert "<img" not in chips and "&lt;" in chips


def test_empty_text_keeps_last_good_view():
    at = open_app(view="Heatmap")
    before = chart_frames(at)[0]
    at.session_state["a"] = "   "
    at.run()
    assert not at.exception
    assert [e.value for e in at.error] == [plain("Text is empty: type a sentence to analyse.")]
    after = chart_frames(at)[0]
    assert after.equals(before)


def test_unknown_model_keeps_default_with_message():
    at = open_app(src="Hugging Face id", model="gpt2", view="Heatmap")
    errors = [e.value for e in at.sidebar.error]
    assert len(errors) == 1 and "gpt2" in errors[0]
    assert at.get("vega_lite_chart"), "the page should keep working on the last good model"


def test_decoder_only_folder_is_refused_and_the_view_stays(tiny_model_dir):
    at = open_app(src="Local folder", model=str(tiny_model_dir("gpt2")), view="Heatmap")
    errors = [e.value for e in at.sidebar.error]
    assert len(errors) == 1 and "decoder-only" in errors[0]
    cards = [m.value for m in at.sidebar.markdown if "model-card" in m.value]
    assert "all-MiniLM-L6-v2" in cards[0]  # the last model that loaded is still in use
    assert at.get("vega_lite_chart")


def test_markdown_in_a_model_link_is_shown_as_text():
    """A shared link cannot plant a live link or an image in the sidebar's error box."""
    at = open_app(src="Hugging Face id", model="[Click here](https://example.com/login)")
    assert [e.value for e in at.sidebar.error] == [
        plain("The folder [Click here](https://example.com/login) does not exist.")]
    assert "\\[Click here\\]" in at.sidebar.error[0].value
    at = open_app(src="Local folder", model="![t](http://127.0.0.1:9/x.png)")
    error = at.sidebar.error[0].value
    assert error == plain("The folder ![t](http://127.0.0.1:9/x.png) does not exist.")
    assert "!\\[t\\]" in error


def test_folder_without_model_message(tmp_path):
    at = open_app(src="Local folder", model=str(tmp_path))
    assert "holds no model" in at.sidebar.error[0].value


def test_long_input_truncated_and_thinned():
    at = open_app(a="food " * 600)
    warnings = [w.value for w in at.warning]
    assert any("truncated to the model's maximum of 512" in w for w in warnings)
    payload = component_payload(at)
    assert payload["n"] == 512
    assert at.slider(key="topk").value == 5


def test_layer_frame_is_the_long_form_of_the_maps():
    from ui.charts import layer_frame

    maps = np.arange(2 * 3 * 2 * 2, dtype=np.float32).reshape(2, 3, 2, 2)
    df = layer_frame(["a", "b"], maps)
    assert len(df) == 24
    row = df[(df.layer == 2) & (df["head"] == 3) & (df.from_pos == 1) & (df.to_pos == 0)]
    assert row["weight"].item() == maps[1, 2, 1, 0] and row["from"].item() == "b"
    one = layer_frame(["a", "b"], maps[1], layer_offset=1)
    assert set(one["layer"]) == {2} and len(one) == 12


def test_head_and_model_views_offer_csv():
    at = open_app()
    assert "CSV of this layer" in [b.label for b in at.get("download_button")]
    at = open_app(view="Model view")
    assert "CSV of every head" in [b.label for b in at.get("download_button")]
