"""AppTest of the Aspects page with a small checkpoint made here (tiny BERT, the default
model's tokenizer), a two-step fine-tune of the sidebar model on the bundled sample, a
stand-in example checkpoint (the example recipe on the tiny BERT, 2 steps) that the page opens
on without a click, and demo mode. Every test gets an empty cache folder and no background
build of the example."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from apptest_util import chart_frames
from ui.aspects import state as aspects_state
from ui.common.errors import plain
from download_util import downloads

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _unglossed(text: str) -> str:
    """``text`` without the few words a page puts after a term at its first use
    (ui.common.frame.explain.glossed: "QA-M (the review paired with a question...) model")."""
    from analysis.report.glossary import SHORT

    for words in SHORT.values():
        text = text.replace(f" ({words})", "")
    return text


@pytest.fixture(scope="module")
def tiny_ckpt(tiny_model_dir, tmp_path_factory):
    from analysis.absa.checkpoints import make_card, save_checkpoint
    from analysis.absa.finetune import fine_tune
    from analysis.absa.readers import load_sample
    from analysis.absa.tasks import build_examples
    from analysis.core.models import load_model

    base_dir = tiny_model_dir("bert")
    base = load_model(str(base_dir))
    ex = build_examples(load_sample().select(range(8)), "qa_m")
    res = fine_tune(base, ex, "qa_m", epochs=1, max_steps=2, batch_size=8, lr=1e-3)
    card = make_card(str(base_dir), "qa_m", "review-aux", "sample[:8]", 0, 1, 128, res,
                       {"aspect_f1": 40.0, "acc_4way": 50.0, "acc_3way": 55.0,
                        "acc_binary": 60.0},
                       curve=[{"epoch": 1, "aspect_f1": 30.0, "acc_4way": 45.0,
                               "acc_3way": 50.0, "acc_binary": 55.0},
                              {"epoch": 2, "aspect_f1": 40.0, "acc_4way": 50.0,
                               "acc_3way": 55.0, "acc_binary": float("nan")}])
    return save_checkpoint(res.model, base.tokenizer,
                             tmp_path_factory.mktemp("ah") / "ckpt", card)


@pytest.fixture(autouse=True)
def _stay_on_page(monkeypatch, tmp_path):
    """ui.common.frame.sidebar.leave_legacy_navigation() reruns the first script run under AppTest,
    and the rerun can forget the page switched to; it only matters for a real server, so it is
    switched off (tests/conftest.py, no_legacy_navigation). The example's cache is an empty folder
    and nothing builds it."""

    monkeypatch.setenv("DASHBOARD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DASHBOARD_EXAMPLE_AUTOBUILD", "0")


@pytest.fixture(scope="module")
def stand_in_example(tiny_model_dir, tmp_path_factory):
    """The example recipe on the tiny BERT (2 steps): a real example card and checkpoint."""
    from analysis.absa.example import build_example
    from analysis.core.models import load_model

    return build_example(tmp_path_factory.mktemp("example") / "example-absa",
                         loaded=load_model(str(tiny_model_dir("bert"))), max_steps=2)


def open_page():
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    at.switch_page("pages/aspects.py")
    at.run()
    assert not at.exception
    return at


def load_on_page(folder):
    """The page with ``folder`` typed into "Load a checkpoint folder" and loaded."""
    at = open_page()
    at.radio(key="ah_source").set_value("Load a checkpoint folder")
    at.run()
    at.text_input(key="ah_folder").set_value(str(folder))
    at.button(key="ah_load").click()
    at.run()
    return at


def curve_frame(at):
    """The data of the held-out learning-curve chart (the only chart with an epoch column)."""
    frames = [f for f in chart_frames(at) if "epoch" in f.columns]
    assert len(frames) == 1, len(frames)
    return frames[0]


def frame_with(at, column):
    frames = [d.value for d in at.dataframe if column in list(d.value.columns)]
    assert frames, column
    return frames


def fine_tune_source(at, task="qa_m"):
    at.radio(key="ah_source").set_value("Fine-tune on the bundled sample")
    at.run()
    at.selectbox(key="ah_task").set_value(task)


def test_page_starts_with_instructions():
    at = open_page()
    assert [t.value for t in at.title] == ["Aspect heads"]
    assert "Fine-tune a model" in at.info[0].value
    # no example in the (empty) cache and no background build: the page says how to make it
    assert "The example checkpoint is not built yet." in at.info[0].value
    assert "python -m analysis" not in at.info[0].value  # local users: under an expander
    assert any("For local users" in e.label for e in at.expander)
    # while there is no example, what the page will show, in words a visitor knows
    assert any(m.value.startswith("**What this page will show.**") for m in at.markdown)
    # ... for the example's own task (its recipe's: NLI-M), not another task's question
    from analysis.core.example import RECIPE
    from analysis.absa.tasks import TASK_NAMES, auxiliary_sentence

    told = next(m.value for m in at.markdown if m.value.startswith("**What this page"))
    assert f"the {TASK_NAMES[RECIPE.task]} task" in told
    assert f"\"{auxiliary_sentence(RECIPE.task, 'food', 'positive')}\"" in told
    assert RECIPE.task != "nli_m" or "what do you think" not in told
    assert at.radio(key="ah_source").value == "Example checkpoint"
    fine_tune_source(at)
    at.run()
    assert at.button(key="ah_train").label == "Fine-tune"
    assert not at.error


def test_bad_checkpoint_folder_is_one_message(tmp_path):
    at = load_on_page(tmp_path)
    assert not at.exception
    assert len(at.error) == 1 and "is not an ABSA checkpoint" in at.error[0].value


def test_loaded_checkpoint_heads_before_and_after(tiny_ckpt):
    at = load_on_page(tiny_ckpt)
    assert not at.exception and not at.error, [e.value for e in at.error]
    # the card's text is shown literally (plain): the same words as before, escaped
    said = _unglossed(at.success[0].value)
    assert said.startswith(plain("QA-M model on sample[:8] (2 layers × 4 heads"))
    metrics = {mm.label: mm.value for mm in at.metric}
    assert metrics["aspect F1"] == "40.0" and metrics["binary acc."] == "60.0"
    curve = curve_frame(at).sort_values(["epoch", "metric"])
    assert curve[["epoch", "metric", "value"]].values.tolist() == [
        [1, "3-way acc.", 50.0], [1, "4-way acc.", 45.0], [1, "aspect F1", 30.0],
        [1, "binary acc.", 55.0],
        [2, "3-way acc.", 55.0], [2, "4-way acc.", 50.0], [2, "aspect F1", 40.0]]  # NaN left out
    at.number_input(key="ah_max").set_value(6)
    at.button(key="ah_find").click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    tables = frame_with(at, "95% CI")
    assert len(tables) == 4  # one ranked table per kind
    for t in tables:
        assert len(t) == 8 and list(t.columns[:3]) == ["layer", "head", "score"]
        assert t["score"].is_monotonic_decreasing
        assert set(t["layer"]) == {1, 2} and set(t["head"]) == {1, 2, 3, 4}  # 1-indexed
        assert (t["change"] - (t["score"] - t["before"])).abs().max() < 1e-9
        assert t["open"].str.contains("view=Head").all()
    # the page's numbers are the library's (kinds in the page's order, layers 1-indexed)
    from analysis.absa.checkpoints import load_checkpoint
    from analysis.aspects.gold import KINDS
    from analysis.aspects.heads import discover
    from analysis.absa.readers import load_sample

    ref = discover(load_checkpoint(tiny_ckpt)[0], load_sample(), "qa_m", "review-aux",
                   max_sentences=6)
    for t, kind in zip(tables, KINDS):
        exp = ref.ranked[kind]
        assert list(zip(t["layer"] - 1, t["head"] - 1)) == [(r["layer"], r["head"]) for r in exp]
        assert t["score"].tolist() == pytest.approx([r["score"] for r in exp], abs=1e-9)
        assert t["accuracy"].tolist() == pytest.approx([r["accuracy"] for r in exp], abs=1e-9)
    baselines = frame_with(at, "baseline")
    assert len(baselines) == 4 and len(baselines[0]) == 4
    grids = [f for f in chart_frames(at) if "model" in f.columns]
    assert len(grids) == 4  # one before|after heatmap per kind
    for g in grids:
        assert sorted(g["model"].unique()) == ["after fine-tuning", "before fine-tuning"]
        assert len(g) == 2 * 8
    assert any("green outline" in c.value for c in at.caption)
    # the example opens in the real head view: the top head of the kind shown, the aspect
    # word of the auxiliary sentence pinned, the gold words marked
    import json

    hv = [json.loads(c.proto.json) for c in at.get("bidi_component")
          if c.proto.component_name == "attention_head_view"]
    assert len(hv) == 1
    top = ref.ranked["aspect"][0]
    pair0 = ref.hs.pairs[ref.hs.pair_index["aspect"][0]]
    assert hv[0]["layer"] == top["layer"] and hv[0]["ui"]["heads"] == [top["head"]]
    assert hv[0]["ui"]["pin"] == {"side": "from", "index": pair0.q[0]}
    assert hv[0]["highlight"] == sorted(pair0.sets["aspect"]) and hv[0]["highlight"]
    assert hv[0]["labels"][pair0.q[0]] in ("price", "anecdotes", "food", "ambience", "service")
    assert any("base model head view" in mdn.value for mdn in at.markdown)
    # a card without held-out ids: the caption says the data may include training sentences
    assert any("some may be training data" in c.value for c in at.caption)
    at.number_input(key="ah_k").set_value(2)
    at.button(key="ah_causal_btn").click()
    at.run()
    assert not at.exception
    causal = frame_with(at, "full model")[0]
    assert list(causal["metric"]) == ["aspect F1", "4-way acc.", "3-way acc.", "binary acc."]
    assert (causal["change (top)"] - (causal["top-2 masked"] - causal["full model"])).abs().max() \
        < 1e-9


def test_causal_check_uses_the_cards_held_out_sentences(tiny_ckpt, tmp_path):
    import json
    import shutil

    from analysis.absa.checkpoints import CARD_NAME
    from analysis.absa.readers import load_sample

    ck = tmp_path / "ck"
    shutil.copytree(tiny_ckpt, ck)
    card = json.loads((ck / CARD_NAME).read_text())
    card["heldout_ids"] = load_sample()["id"][2:4]  # two of the first six sentences
    (ck / CARD_NAME).write_text(json.dumps(card))
    at = load_on_page(ck)
    at.number_input(key="ah_max").set_value(6)
    at.button(key="ah_find").click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("the checkpoint's 2 held-out sentences (from its card)" in c.value
               for c in at.caption)


def test_fine_tune_on_the_sample_two_steps():
    at = open_page()
    fine_tune_source(at)
    at.number_input(key="ah_epochs").set_value(0.01)  # ceil(0.01 * 60 steps) = 1 step
    at.button(key="ah_train").click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    said = _unglossed(at.success[0].value)
    assert said.startswith("QA-M model on bundled sample (6 layers × 12 heads")
    metrics = {mm.label: mm.value for mm in at.metric}
    assert set(metrics) == {"aspect F1", "4-way acc.", "3-way acc.", "binary acc."}
    assert not [f for f in chart_frames(at) if "epoch" in f.columns]  # no full epoch: no curve
    assert at.text_input(key="ah_save_to") is not None


def test_fine_tune_two_epochs_draws_the_held_out_curve(tiny_model_dir):
    """The sidebar's model (a tiny BERT folder) fine-tuned for two epochs: the page evaluates
    on the held-out sentences after each epoch, the card keeps that curve, and its last point
    is the model's final held-out evaluation."""
    at = AppTest.from_file(APP, default_timeout=240)
    at.query_params["src"] = "Local folder"
    at.query_params["model"] = str(tiny_model_dir("bert"))
    at.run()
    at.switch_page("pages/aspects.py")
    at.run()
    fine_tune_source(at)
    at.number_input(key="ah_epochs").set_value(2.0)
    at.button(key="ah_train").click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    said = _unglossed(at.success[0].value)
    assert said.startswith("QA-M model on bundled sample (2 layers × 4 heads")
    card = at.session_state[aspects_state.MODEL].card
    assert [c["epoch"] for c in card["curve"]] == [1, 2]
    last = card["curve"][-1]
    assert all(last[k] == card["metrics"][k] for k in ("aspect_f1", "acc_4way", "acc_binary"))
    drawn = curve_frame(at)
    assert sorted(set(drawn["epoch"])) == [1, 2]
    assert drawn.loc[(drawn.epoch == 2) & (drawn.metric == "aspect F1"), "value"].item() == \
        pytest.approx(card["metrics"]["aspect_f1"])


def copy_example(folder):
    import os
    import shutil

    shutil.copytree(folder, Path(os.environ["DASHBOARD_CACHE"]) / "example-absa")


def test_opens_on_the_example_with_heads_and_verdict_without_a_click(stand_in_example):
    from urllib.parse import quote_plus

    from analysis.core.example import RECIPE
    from analysis.absa.example import load_example
    from analysis.aspects.heads import discover, verdict
    from analysis.aspects.reading import reading
    from analysis.absa.readers import load_sample
    from analysis.absa.tasks import TASK_NAMES
    from ui.server.settings import settings

    copy_example(stand_in_example)
    at = open_page()  # no click anywhere
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.radio(key="ah_source").value == "Example checkpoint"
    assert _unglossed(at.success[0].value).startswith(
        plain(f"{TASK_NAMES[RECIPE.task]} model on bundled sample (2 layers × 4 heads"))
    card = at.session_state[aspects_state.MODEL].card
    metrics = {mm.label: mm.value for mm in at.metric}
    assert metrics["aspect F1"] == f"{card['metrics']['aspect_f1']:.1f}"
    assert metrics["4-way acc."] == f"{card['metrics']['acc_4way']:.1f}"
    tables = frame_with(at, "95% CI")
    assert len(tables) == 4 and all(len(t) == 8 for t in tables)
    # the heads are the library's on the first 60 sample sentences, and so is the verdict
    ref = discover(load_example()[0], load_sample(), RECIPE.task, RECIPE.pair_order,
                   max_sentences=60)
    top = ref.ranked["aspect"][0]
    assert (tables[0]["layer"][0] - 1, tables[0]["head"][0] - 1) == (top["layer"], top["head"])
    assert tables[0]["score"][0] == pytest.approx(top["score"], abs=1e-9)
    lines = reading(ref.ranked, ref.baselines)  # the page adds the before/after change
    assert lines[0] == verdict(ref.ranked, ref.baselines)[0]
    assert plain(lines[0]) in [i.value for i in at.info]
    shown = [m.value for m in at.markdown if m.value.startswith("- ")]
    (block,) = [m for m in shown if m.startswith("\n".join(f"- {plain(x)}" for x in lines[1:]))]
    assert block.startswith("- For aspect terms, ")  # by how much, from the numbers
    assert "the best score for aspect terms" in block  # before vs after fine-tuning
    # the links open the example by its listed name, never by its folder
    name = quote_plus(settings().model_name("example"))
    assert tables[0]["open"].str.contains(f"model={name}", regex=False).all()
    assert not tables[0]["open"].str.contains("cache", regex=False).any()
    # the causal check evaluates the example's own held-out sentences (15% of 222 -> 33)
    assert any("the 165 held-out pairs of the fine-tuning run" in c.value for c in at.caption)
    assert [b.label for b in downloads(at)
            if "model" in b.label] == ["Download the model (.zip)"]


@pytest.fixture()
def demo_mode(monkeypatch):
    from ui.server.settings import settings

    monkeypatch.setenv("DASHBOARD_MODE", "demo")
    settings.cache_clear()
    yield
    monkeypatch.delenv("DASHBOARD_MODE")
    settings.cache_clear()


def test_demo_mode_has_no_server_path_boxes_and_caps(stand_in_example, demo_mode):
    copy_example(stand_in_example)
    at = open_page()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.radio(key="ah_source").options == [
        "Example checkpoint", "Fine-tune on the bundled sample", "Upload a checkpoint .zip"]
    keys = [w.key for w in at.text_input]
    assert "ah_save_to" not in keys and "ah_folder" not in keys
    assert [b.label for b in downloads(at)
            if "model" in b.label] == ["Download the model (.zip)"]
    assert at.number_input(key="ah_max").max == 300  # settings' max_examples
    fine_tune_source(at)
    at.run()
    assert at.number_input(key="ah_epochs").max == 3.0  # settings' max_epochs
    at.radio(key="ah_source").set_value("Upload a checkpoint .zip")
    at.run()
    assert not at.exception
    assert "ah_folder" not in [w.key for w in at.text_input]
    assert any("Fine-tune a model" in i.value for i in at.info)


def test_demo_mode_zip_download_and_upload_round_trip(stand_in_example, demo_mode, tmp_path,
                                                      monkeypatch):
    """A checkpoint leaves as a .zip and comes back by upload (read from memory, unpacked in a
    private temporary folder that is deleted); a bad .zip is one message. The temporary
    folders are counted in a folder of this test's own (another process may be unpacking an
    upload into the shared one)."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    from analysis.absa.checkpoints import load_checkpoint
    from analysis.absa.pipeline import checkpoint_zip

    lm, card = load_checkpoint(stand_in_example)
    data = checkpoint_zip(lm.model, lm.tokenizer, card)
    temps = set(Path(tempfile.gettempdir()).glob("absa-upload-*"))
    at = open_page()
    at.radio(key="ah_source").set_value("Upload a checkpoint .zip")
    at.run()
    at.file_uploader(key="ah_zip_0").set_value(("not-a-zip.zip", b"hello", "application/zip"))
    at.run()
    assert not at.exception
    assert [e.value for e in at.error] == [plain("uploaded not-a-zip.zip is not a .zip file.")]
    at.file_uploader(key="ah_zip_0").set_value(("mine.zip", data, "application/zip"))
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    state = at.session_state[aspects_state.MODEL]
    assert state.loaded.spec == "uploaded mine.zip" and state.card == card
    said = _unglossed(at.success[0].value)
    assert said.startswith(plain(f"{card['task_name']} model on bundled sample"))
    # the upload box is a new, empty one: the upload itself is not kept
    assert [u.key for u in at.file_uploader] == ["ah_zip_1"]
    assert set(Path(tempfile.gettempdir()).glob("absa-upload-*")) == temps
    at.number_input(key="ah_max").set_value(6)
    at.button(key="ah_find").click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert len(frame_with(at, "95% CI")) == 4
