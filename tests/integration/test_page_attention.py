"""AppTest of the app and the Attention page: deep links, every view, exact values, bad input."""

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from analysis.attention import attention_for, level_view
from apptest_util import chart_frames
from ui.common.errors import plain
from ui.common.frame.sidebar import EXAMPLE_A, EXAMPLE_B
from download_util import downloads

XSS = "<img src=x onerror=alert(1)>"


def open_app(**params) -> AppTest:
    at = AppTest.from_file("../../app.py", default_timeout=180)
    for k, v in params.items():
        at.query_params[k] = v
    at.switch_page("pages/attention.py")  # not the app's first page (the Head atlas)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def component_payload(at, name="attention_views") -> dict:
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
    assert payload["ui"] == {"view": "head", "layer": 0, "heads": None, "pin": None,
                             "segment": "All"}
    assert (payload["n_layers"], payload["n_heads"], len(payload["layers"])) == (6, 12, 6)
    chips = [m.value for m in at.markdown if "class='tokens'" in m.value][0]
    assert chips.count("tok sp") == 2  # [CLS] and [SEP] shown as structure


def test_deep_link_heatmap_shows_the_models_map(default_model):
    at = open_app(mode="Sentence pair", view="Heatmap", layer="3", head="5")
    assert at.selectbox(key="layer").value == 3 and at.selectbox(key="head").value == 5
    df = chart_frames(at)[0].sort_values(["from_pos", "to_pos"])
    ref = attention_for(default_model, EXAMPLE_A, EXAMPLE_B).attentions[2, 4]
    np.testing.assert_allclose(df["weight"].to_numpy().reshape(ref.shape), ref, atol=1e-6)
    labels = [b.label for b in downloads(at)]
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
    assert payload["ui"]["layer"] == 1
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
    keys = [b.key for b in downloads(at)]
    for part in ("neuron-q-dl", "neuron-keys-dl", "neuron-products-dl", "neuron-dl"):
        assert [k for k in keys if k.startswith(part + "-")] == [
            f"{part}-png", f"{part}-svg", f"{part}-csv"], keys


def report(at, state: dict) -> AppTest:
    """What the browser sends when the component reports its state (AppTest cannot run the
    component's JavaScript): the widget states of the page plus the component's value."""
    from streamlit.proto.WidgetStates_pb2 import WidgetStates

    comp = [c for c in at.get("bidi_component") if c.proto.component_name == "attention_views"]
    states: WidgetStates = at._tree.get_widget_states()
    w = states.widgets.add()
    w.id = comp[0].proto.id
    w.json_value = json.dumps({"state": state})
    at._run(widget_state=states)
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_model_view_grid_and_click_opens_the_head_in_the_component(monkeypatch):
    """A click on layer 3, head 5 of the model view opens that head in the component's head
    view; the component reports it, and the widgets and the URL follow without a forward pass
    and without a new payload."""
    import analysis.attention.views
    import analysis.core.maps

    at = open_app(view="Model view")
    payload = component_payload(at)
    assert (payload["n_layers"], payload["n_heads"]) == (6, 12)
    assert payload["ui"]["view"] == "model"
    assert at.selectbox(key="layer").disabled  # the model view shows every layer
    calls = []
    for mod, name in ((analysis.core.maps, "attention_for"),  # what the study's plan calls
                      (analysis.attention.views, "views_payload")):
        real = getattr(mod, name)
        monkeypatch.setattr(mod, name, lambda *a, _r=real, _n=name, **k: (calls.append(_n),
                                                                         _r(*a, **k))[1])
    report(at, {"view": "head", "layer": 2, "heads": [4], "pin": None, "segment": "All"})
    assert at.segmented_control(key="view").value == "Head view"
    assert at.selectbox(key="layer").value == 3 and at.selectbox(key="head").value == 5
    assert not at.selectbox(key="layer").disabled
    q = dict(at.query_params)
    assert (q["view"], q["layer"], q["head"], q["heads"]) == ("Head view", "3", "5", "5")
    assert "pin" not in q and "seg" not in q
    assert calls == []  # nothing recomputed: cached forward, cached payload
    after = component_payload(at)
    assert after["ui"] == {"view": "head", "layer": 2, "heads": [4], "pin": None,
                           "segment": "All"}
    assert after["digest"] == payload["digest"]
    assert not [w.value for w in at.warning if "Session State" in str(w.value)]


def test_component_state_to_widgets_and_url_and_back():
    at = open_app(mode="Sentence pair")
    report(at, {"view": "head", "layer": 5, "heads": [0, 2, 11], "pin": {"side": "to", "index": 3},
                "segment": "A->B"})
    q = dict(at.query_params)
    assert (q["layer"], q["heads"], q["pin"], q["seg"]) == ("6", "1,3,12", "to:4", "A->B")
    assert at.selectbox(key="layer").value == 6
    # the URL the page now shows opens the view in the same state
    fresh = open_app(**{k: v for k, v in q.items()})
    assert component_payload(fresh)["ui"] == {
        "view": "head", "layer": 5, "heads": [0, 2, 11], "pin": {"side": "to", "index": 3},
        "segment": "A->B"}
    # every head again, nothing pinned, all segments: the parameters leave the URL
    report(at, {"view": "head", "layer": 5, "heads": None, "pin": None, "segment": "All"})
    assert not {"heads", "pin", "seg"} & set(at.query_params)


def test_a_late_report_does_not_undo_a_widget_change():
    """The user switched the layer in the view, then chose the model view with the page's
    widget before the view reported: the report (which lists the keys the user changed in
    the view) moves the layer only."""
    at = open_app()
    at.segmented_control(key="view").set_value("Model view").run()
    report(at, {"view": "head", "layer": 4, "heads": None, "pin": None, "segment": "All",
                "changed": ["layer"]})
    assert at.segmented_control(key="view").value == "Model view"
    assert at.selectbox(key="layer").value == 5
    assert component_payload(at)["ui"]["view"] == "model"


def test_link_params_restore_the_view_and_bad_values_are_ignored():
    at = open_app(mode="Sentence pair", layer="2", heads="3,1", pin="2", seg="B->B")
    assert component_payload(at)["ui"] == {"view": "head", "layer": 1, "heads": [0, 2],
                                           "pin": {"side": "from", "index": 1}, "segment": "B->B"}
    for bad in ({"heads": "0,13"}, {"heads": "x"}, {"pin": "999"}, {"pin": "up:2"},
                {"pin": "-1"}, {"seg": "A->C"}):
        at = open_app(**bad)
        ui = component_payload(at)["ui"]
        assert (ui["heads"], ui["pin"], ui["segment"]) == (None, None, "All"), bad
    # a state the component could not have sent (out of range) changes nothing
    at = open_app()
    report(at, {"view": "nope", "layer": 99, "heads": [40], "pin": {"side": "to", "index": 999},
                "segment": "sideways"})
    assert at.selectbox(key="layer").value == 1
    assert not {"heads", "pin", "seg"} & set(at.query_params)


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


def test_an_emptied_text_shows_each_visitor_only_their_own_last_view(default_model):
    """Two visitors each type a sentence, then empty the box: each keeps their own last view.
    (The packed view was cached by the box's text, so the second visitor with an empty box got
    the first one's sentence.)"""
    words, neuron = [], []
    for word in ("castle", "violin"):
        at = open_app()
        at.session_state["a"] = f"My {word} is here."
        at.run()
        at.session_state["a"] = ""
        at.run()
        assert [e.value for e in at.error] == [plain("Text is empty: type a sentence to "
                                                     "analyse.")]
        words.append((word, component_payload(at)["labels"]))
        at.session_state["view"] = "Neuron view"  # its query/key vectors are cached too
        at.run()
        scores = [f for f in chart_frames(at) if "score" in f.columns][0]
        neuron.append((word, list(scores["token"])))
    for word, labels in words + neuron:
        assert any(word in t for t in labels), labels
        assert not any(other in t for t in labels for other in {"castle", "violin"} - {word})


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
    assert payload["n"] == 512 and payload["encoding"] == "sparse"
    assert len(json.dumps(payload)) <= 2_000_000
    assert any(f"{payload['top_k']} strongest keys" in c.value for c in at.caption)


def test_long_input_heatmap_is_drawn_by_the_component(default_model):
    """Above 96 labels the heatmap is the component's canvas, fed the whole map (8 bits of
    its maximum); short inputs keep the Altair chart."""
    at = open_app(a="food " * 600, view="Heatmap", layer="2", head="3")
    payload = component_payload(at)
    assert "layers" not in payload and payload["ui"]["view"] == "heatmap"
    hm = payload["heatmap"]
    ref = attention_for(default_model, "food " * 600).attentions[1, 2]
    q = np.frombuffer(__import__("base64").b64decode(hm["weights"]), np.uint8).reshape(512, 512)
    assert (hm["layer"], hm["head"]) == (1, 2) and hm["max"] == pytest.approx(ref.max())
    assert np.abs(q * hm["max"] / 255 - ref).max() <= 0.5 * hm["max"] / 255 + 1e-6
    assert not at.get("vega_lite_chart")
    assert [b.label for b in downloads(at)][-3:] == ["PNG", "SVG", "CSV"]
    # 512 x 512 cells: the images are block means, and the page says so beside the buttons
    assert any("262,144 cells" in c.value and "4 x 4" in c.value for c in at.caption)


def test_layer_frame_is_the_long_form_of_the_maps():
    from ui.common.charts import layer_frame

    maps = np.arange(2 * 3 * 2 * 2, dtype=np.float32).reshape(2, 3, 2, 2)
    df = layer_frame(["a", "b"], maps)
    assert len(df) == 24
    row = df[(df.layer == 2) & (df["head"] == 3) & (df.from_pos == 1) & (df.to_pos == 0)]
    assert row["weight"].item() == maps[1, 2, 1, 0] and row["from"].item() == "b"
    one = layer_frame(["a", "b"], maps[1], layer_offset=1)
    assert set(one["layer"]) == {2} and len(one) == 12


def test_head_and_model_views_offer_csv():
    at = open_app()
    assert "CSV of every head" in [b.label for b in downloads(at)]
    at = open_app(view="Model view")
    assert "CSV of every head" in [b.label for b in downloads(at)]


def test_reading_is_computed_from_the_shown_head_and_reports_pin_it(default_model, monkeypatch):
    import ui.common.frame.sidebar
    from analysis.attention.reading import attention_reading, layer_reading, model_reading

    # AppTest starts every run in Streamlit's legacy pages mode, whose one-off rerun would eat
    # a button's click (a real server leaves that mode once)
    monkeypatch.setattr(ui.common.frame.sidebar, "leave_legacy_navigation", lambda: None)
    ref = attention_for(default_model, EXAMPLE_A)
    # the heatmap of layer 3, head 5: the reading is that head's, in plain text
    at = open_app(view="Heatmap", layer="3", head="5")
    infos = [i.value for i in at.info]
    assert plain(attention_reading(ref, 3, 5).sentence) in infos
    at.button(key="report-add-attention").click().run()
    assert not at.exception
    rep = at.session_state["_report"]
    assert len(rep.findings) == 1
    f = rep.findings[0]
    assert f.title == "Attention: heatmap, layer 3, head 5" and f.kind == "chart"
    assert f.svg.lstrip().startswith("<svg") and "<rect" in f.svg
    assert f.reading == [attention_reading(ref, 3, 5).sentence]
    assert "layer=3" in f.link and "head=5" in f.link
    assert f.source["setting: view"] == "Heatmap"
    # the head view reads every head of the layer; its report is a table of their habits
    at = open_app(view="Head view", layer="1")
    assert plain(" ".join(layer_reading(ref, 1))) in [i.value for i in at.info]
    at.button(key="report-add-attention").click().run()
    f = at.session_state["_report"].findings[-1]
    assert f.kind == "table" and len(f.rows) == 12 and f.columns[:2] == ["layer", "head"]
    # the model view: how many heads have each habit, over all 72
    at = open_app(view="Model view")
    (text,) = [i.value for i in at.info]
    assert text == plain(model_reading(ref)) and text.startswith("Of the 72 heads")
