"""The patching command on the embedded default model (its real weights, with a seeded 5-way
ABSA head, saved as the example checkpoint in a temporary cache): the JSON is the library's,
the checks hold on the real model, bad input is one line, and the page shows the CLI's
numbers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from builders import run_cli

ROOT = Path(__file__).resolve().parents[2]
TEXT = "The pasta was delicious and the waiter was friendly."


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A cache folder whose example checkpoint is the default model with a seeded head."""
    import torch
    import transformers as T

    from analysis.absa.checkpoints import make_card, save_checkpoint
    from analysis.absa.example import split_sample
    from analysis.absa.finetune import FineTuneResult
    from analysis.core.example import FOLDER, RECIPE, recipe_dict
    from analysis.core.models import default_model_path

    torch.manual_seed(0)
    model = T.AutoModelForSequenceClassification.from_pretrained(
        default_model_path(), num_labels=5, attn_implementation="eager")
    with torch.no_grad():  # a head that reacts to its input: logits of a few units
        model.classifier.weight.normal_(0.0, 1.0)
    model.eval()
    tok = T.AutoTokenizer.from_pretrained(default_model_path())
    _, held = split_sample()
    card = make_card("default", RECIPE.task, RECIPE.pair_order, "sample", 0, 1,
                     RECIPE.max_length, FineTuneResult(model, tok, [1.0], 0.0, [], 0),
                     example_recipe=recipe_dict(), heldout_ids=list(held["id"]))
    root = tmp_path_factory.mktemp("cache")
    save_checkpoint(model, tok, root / FOLDER, card)
    return root


def _cli(cache, *args):
    return run_cli("patching", *args, env={"DASHBOARD_CACHE": str(cache)})


@pytest.fixture
def example(cache, monkeypatch):
    monkeypatch.setenv("DASHBOARD_CACHE", str(cache))
    monkeypatch.setenv("DASHBOARD_EXAMPLE_AUTOBUILD", "0")
    from analysis.importance.evalset import load_classifier

    return load_classifier("example")


def test_cli_writes_the_librarys_numbers_and_the_checks_hold(cache, example, tmp_path):
    from analysis.core.batching import collate
    from analysis.core.encoding import encode
    from analysis.core.forward import forward, forward_patched
    from analysis.patching import patch_pair

    loaded, card = example
    counter = TEXT.replace("friendly", "rude")
    out = tmp_path / "p.json"
    done = _cli(cache, "--model", "example", "--text", TEXT, "--pair", "service",
                "--counter-text", counter, "--counter-pair", "service", "--out", str(out))
    assert done.returncode == 0, done.stderr
    got = json.loads(out.read_text())
    ref = patch_pair(loaded, TEXT, "service", counter, "service",
                     max_length=card["max_length"])
    assert got["tokens"][:5] == ["[CLS]", "the", "pasta", "was", "delicious"]
    assert got["classes"] == list(ref.classes) and got["differs"] == [9]
    np.testing.assert_allclose(got["heads"], ref.heads, atol=1e-5)
    np.testing.assert_allclose(got["residual"], ref.positions["residual"], atol=1e-5)
    assert got["clean"] == pytest.approx(ref.contrast.clean, abs=1e-5)
    # on the real model (float32; shares divide by the gap): after the last layer only [CLS]
    # carries it (the pooler reads it)
    T = len(got["tokens"])
    np.testing.assert_allclose(got["residual"][-1], [1.0] + [0.0] * (T - 1), atol=1e-4)
    # every head of a layer together = the layer's attention output (1e-5)
    encs = [encode(loaded.tokenizer, TEXT, "service"), encode(loaded.tokenizer, counter,
                                                              "service")]
    inputs = [collate(loaded.tokenizer, [e]) for e in encs]
    outs = [forward(loaded.model, inputs=i, attentions=False,
                    hidden_states=True, capture=("context", "attention_output"))
            for i in inputs]
    # the whole residual stream after the last layer gives the counterfactual's logits (1e-5)
    whole = forward_patched(loaded.model, inputs[0], "residual", loaded.n_layers - 1,
                            outs[1].hidden_states[-1][0], np.ones((1, T, 1), bool))
    np.testing.assert_allclose(whole, outs[1].output.logits.numpy(), atol=1e-5)
    for layer in range(loaded.n_layers):
        heads = forward_patched(loaded.model, inputs[0], "heads", layer,
                                outs[1].captured["context"][layer][0], np.ones((1, T, 384), bool))
        attn = forward_patched(loaded.model, inputs[0], "attention", layer,
                               outs[1].captured["attention_output"][layer][0],
                               np.ones((1, T, 1), bool))
        np.testing.assert_allclose(heads, attn, atol=1e-5)


def test_bad_input_is_one_line(cache, tmp_path):
    done = _cli(cache, "--model", "example", "--text", TEXT, "--pair", "service",
                "--counter-text", TEXT + " Really.", "--counter-pair", "service",
                "--out", str(tmp_path / "x.json"))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "same number of tokens" in done.stderr
    assert not (tmp_path / "x.json").exists()


def test_the_page_shows_the_clis_numbers(cache, example, tmp_path):
    from streamlit.testing.v1 import AppTest

    from analysis.absa.tasks import build_examples
    from analysis.importance.evalset import load_eval_set
    from analysis.patching.counterfactuals import opinion_pool, opinion_suggestions
    from analysis.patching.run import default_pair
    from apptest_util import chart_frames

    loaded, card = example
    ev = load_eval_set(loaded, card, "sample")
    i, category = default_pair(loaded, ev, card["max_length"])
    ex = next(e for e in build_examples(ev.sentences.select([i]), ev.task, ev.pair_order)
              if e.category == category)
    sug = opinion_suggestions(loaded.tokenizer, ev.sentences[i], ex, opinion_pool(ev.sentences),
                              card["max_length"])[0]
    out = tmp_path / "page.json"
    done = _cli(cache, "--model", "example", "--text", ex.text_a, "--pair", ex.text_b,
                "--counter-text", sug.text, "--counter-pair", sug.pair, "--out", str(out))
    assert done.returncode == 0, done.stderr
    got = json.loads(out.read_text())
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    at.switch_page("pages/patching.py")
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    heads = chart_frames(at)[0].sort_values(["layer", "head"])["effect"].to_numpy()
    np.testing.assert_allclose(heads, np.asarray(got["heads"]).reshape(-1), atol=1e-5)
    residual = chart_frames(at)[1]
    np.testing.assert_allclose(
        residual.sort_values(["layer", "position"])["effect"].to_numpy(),
        np.asarray(got["residual"]).reshape(-1), atol=1e-5)
