"""Fine-tuning only the top layers (fine_tune's ``trained_layers``): the lower layers and the
embeddings keep the base weights, their outputs are computed once and fed to the top layers
(analysis.core.hooks.start_at_layer through analysis.core.forward.forward), which gives the numbers
of the
whole forward; the recipe and the Aspect heads page pass the same options (docs/METHODS.md
section 7, "The example checkpoint")."""

from __future__ import annotations

import dataclasses

import pytest
from types import SimpleNamespace
import torch

from analysis.absa.finetune import _padded, _tokenize, fine_tune, frozen_count, \
    lower_layer_outputs, make_classifier
from analysis.absa.readers import load_sample
from analysis.absa.tasks import build_examples
from analysis.core.batching import pad_features
from analysis.core.errors import InputError
from analysis.core.forward import forward


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    from analysis.core.models import load_model

    return load_model(str(tiny_model_dir("bert")))


@pytest.fixture(scope="module")
def pairs():
    return build_examples(load_sample().select(range(3)), "nli_m")  # 15 pairs, lengths vary


@pytest.mark.parametrize("arch", ["bert", "roberta"])
@pytest.mark.parametrize("k", [0, 1, 2])
def test_cached_lower_layers_give_the_whole_forward(tiny_model_dir, pairs, arch, k):
    from analysis.core.models import load_model

    loaded = load_model(str(tiny_model_dir(arch)))
    clf = make_classifier(loaded, "nli_m", seed=0)
    enc = _tokenize(loaded.tokenizer, pairs, 64)
    cached = lower_layer_outputs(clf, loaded.tokenizer, enc, k, batch_size=4)
    assert [c.shape[0] for c in cached] == [len(x) for x in enc["input_ids"]]
    idx = [0, 3, 7, 14]
    inputs = pad_features(loaded.tokenizer, enc, idx)
    n = inputs["input_ids"].shape[1]
    whole = forward(clf, inputs=inputs, attentions=False).output.logits
    top = forward(clf, inputs=inputs, attentions=False, start_layer=k,
                  layer_inputs=_padded([cached[i] for i in idx], n)).output.logits
    assert torch.allclose(whole, top, atol=1e-6, rtol=0)
    # the given inputs are what the top layers read (other inputs, other logits) and the model
    # has all its layers again afterwards
    other = forward(clf, inputs=inputs, attentions=False, start_layer=k,
                    layer_inputs=_padded([torch.randn_like(cached[i]) for i in idx], n))
    assert (other.output.logits - whole).abs().max() > 1e-3
    assert len(clf.base_model.encoder.layer) == 2


def test_top_layer_training_leaves_the_lower_weights_as_they_were(tiny, pairs):
    start = make_classifier(tiny, "nli_m", seed=0).state_dict()
    res = fine_tune(tiny, pairs, "nli_m", epochs=3, batch_size=8, lr=1e-3, seed=0,
                    trained_layers=1)
    assert res.frozen_layers == 1
    after = res.model.state_dict()
    frozen = [k for k in start if k.startswith(("bert.embeddings.", "bert.encoder.layer.0."))]
    trained = [k for k in start if k.startswith(("bert.encoder.layer.1.", "classifier."))]
    assert len(frozen) > 5 and len(trained) > 5
    assert all(torch.equal(start[k], after[k]) for k in frozen)
    assert all(not torch.equal(start[k], after[k]) for k in trained if "weight" in k)
    assert res.losses[-1] < res.losses[0]
    assert all(p.requires_grad for p in res.model.parameters())  # a plain model again
    assert len(res.model.bert.encoder.layer) == 2


def test_trained_layers_none_or_all_is_the_whole_fine_tune(tiny, pairs):
    plain = fine_tune(tiny, pairs, "nli_m", epochs=1, batch_size=8, lr=1e-3, seed=0)
    every = fine_tune(tiny, pairs, "nli_m", epochs=1, batch_size=8, lr=1e-3, seed=0,
                      trained_layers=5)  # more than the 2 layers: nothing frozen
    assert plain.frozen_layers == every.frozen_layers == 0
    assert plain.losses == every.losses
    clf = make_classifier(tiny, "nli_m")
    assert [frozen_count(clf, t) for t in (None, 0, 1, 2, 3)] == [0, 2, 1, 0, 0]
    with pytest.raises(InputError, match="0 or more"):
        frozen_count(clf, -1)


def test_an_architecture_without_an_encoder_stack_is_refused(tiny_model_dir, pairs):
    from analysis.core.models import load_model

    distil = load_model(str(tiny_model_dir("distilbert")))
    with pytest.raises(InputError, match="not supported for this architecture"):
        fine_tune(distil, pairs[:4], "nli_m", epochs=1, batch_size=4, trained_layers=1)


def test_the_page_fine_tunes_with_the_recipe(monkeypatch, tiny_model_dir):
    """The Aspect heads page's "Fine-tune" passes the recipe's options (lr, batch, length,
    trained layers): the page's defaults are the example's recipe."""
    from types import SimpleNamespace

    from analysis.core.example import RECIPE, recipe_dict, train_options
    from ui.aspects import models
    from analysis.core.execution.placements import Away, InProcess

    seen = {}

    def fake_run(spec, train, test, task, **kw):  # the fine-tune's own process, by spec
        seen.update(kw, spec=spec, task=task, n_train=len(train), n_test=len(test))
        raise InputError("stop")

    monkeypatch.setattr(models, "run_fine_tune_apart", fake_run)
    monkeypatch.setattr(models, "run_job",
                        lambda label, work, key=None, **about:
                        InProcess().run(work, lambda *a: None))
    monkeypatch.setattr(models, "admit_model", lambda n: None)
    monkeypatch.setattr(models, "show_error", lambda exc: seen.setdefault("error", str(exc)))
    from analysis.core.models import load_model

    bert = load_model(str(tiny_model_dir())).model
    ctx = SimpleNamespace(loaded=SimpleNamespace(n_params=1, model=bert, max_length=128),
                          spec="default")
    models.fine_tune_on_sample(ctx, RECIPE.task, RECIPE.pair_order, RECIPE.epochs, RECIPE.seed)
    assert seen["error"] == "stop"
    assert {k: seen[k] for k in train_options()} == train_options() == {
        "lr": RECIPE.lr, "batch_size": RECIPE.batch_size, "max_length": RECIPE.max_length,
        "trained_layers": RECIPE.trained_layers}
    assert (seen["task"], seen["pair_order"], seen["epochs"], seen["seed"]) == (
        RECIPE.task, RECIPE.pair_order, RECIPE.epochs, RECIPE.seed)
    assert (seen["n_train"], seen["n_test"]) == (189, 33)
    assert seen["spec"] == seen["base_spec"] == "default" and seen["nice"] == 10
    assert seen["away"] == Away() and seen["away"].here  # the in-process placement's: a
    # child process of its own on this machine
    assert set(recipe_dict()) == set(train_options()) | {
        "task", "pair_order", "epochs", "heldout", "seed", "base", "data", "version"}


def test_the_page_trains_every_layer_of_a_model_it_cannot_cut(tiny_model_dir, monkeypatch):
    """DistilBERT's layout cannot train only its top layers: the page's fine-tune trains every
    layer of it (and says so) instead of refusing the sidebar's model; BERT gets the recipe."""
    from analysis.absa.finetune import top_layers_trainable
    from analysis.core.example import RECIPE
    from analysis.core.models import load_model
    from ui.aspects.models import page_train_options, trained_part_words

    distil = load_model(str(tiny_model_dir("distilbert"))).model
    bert = load_model(str(tiny_model_dir())).model
    assert (top_layers_trainable(bert), top_layers_trainable(distil)) == (True, False)
    assert page_train_options(distil)["trained_layers"] is None
    assert page_train_options(bert)["trained_layers"] == RECIPE.trained_layers is None
    assert trained_part_words(distil) == "Every layer is trained."
    assert trained_part_words(bert) == "Every layer is trained."

    class Six:  # the default model's shape: 6 layers
        config = SimpleNamespace(num_hidden_layers=6)
        base_model_prefix = "bert"
        bert = SimpleNamespace(encoder=SimpleNamespace(layer=[]), embeddings=None)

    assert trained_part_words(Six()) == "Every layer is trained."  # issue 29: the recipe
    from ui.aspects import models as page_models

    frozen = dataclasses.replace(RECIPE, trained_layers=2)  # issue 22's recipe: still said
    monkeypatch.setattr(page_models, "RECIPE", frozen)
    assert trained_part_words(Six()).startswith("Only the top 2 of its 6 layers are trained")
