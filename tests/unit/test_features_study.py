"""The features study on tiny models: splice fidelity with dictionaries whose answers are
known (an exact one: everything recovered; an empty one: nothing), class effects against a
forward with the feature's contribution removed by hand, the whole study and its JSON, the
CLI's train/show and its one-line errors, the precomputed result's recipe check."""

from __future__ import annotations

import json

import numpy as np
import pytest

from analysis.features.activations import collect
from analysis.features.browser import codes
from analysis.features.data import corpus_of, load_models
from analysis.features.effects import class_effects
from analysis.features.quality import splice_fidelity
from analysis.features.sae import SAE
from analysis.features.study import SCHEMA, Inputs, Models, Result, run
from analysis.features.train import TrainSettings
from builders import run_cli


def exact_sae(d: int, layer: int) -> SAE:
    """relu(x) - relu(-x) = x: features 0..d-1 the positive parts, d..2d-1 the negative."""
    eye = np.eye(d, dtype=np.float32)
    return SAE(np.concatenate([eye, -eye], 1), np.zeros(2 * d, np.float32),
               np.concatenate([eye, -eye], 0), np.zeros(d, np.float32), k=2 * d, layer=layer,
               activation="relu", pre_bias=False, scale=1.0)


@pytest.fixture(scope="module")
def tiny_encoder(tiny_model_dir):
    return load_models(str(tiny_model_dir("bert")))


@pytest.fixture(scope="module")
def tiny_classifier(tiny_checkpoint):
    return load_models(str(tiny_checkpoint))


def held_encodings(loaded, corpus, layer):
    acts = collect(loaded, corpus, [layer])
    tok = acts.tokens
    return acts, [e for e, i in zip(tok.encodings, tok.inputs) if corpus.heldout[i]]


def test_splice_of_an_exact_and_an_empty_dictionary(tiny_encoder):
    loaded, card = tiny_encoder
    assert card is None
    corpus = corpus_of("treebank", None, max_examples=20)
    _, encs = held_encodings(loaded, corpus, 1)
    exact = splice_fidelity(loaded, exact_sae(32, 1), encs)
    assert exact["agreement_kind"] == "cosine"
    assert exact["agreement"] == pytest.approx(1.0, abs=1e-5)
    assert exact["loss_recovered"] == pytest.approx(1.0, abs=1e-4)
    empty = exact_sae(32, 1)
    empty.W_dec[:] = 0
    zero = splice_fidelity(loaded, empty, encs)
    assert zero["loss_recovered"] == pytest.approx(0.0, abs=1e-9)
    assert zero["losses"]["splice"] == pytest.approx(zero["losses"]["zero"])


def test_class_effects_match_a_forward_without_the_feature(tiny_classifier):
    import torch

    from analysis.core.batching import collate
    from analysis.core.forward import forward, forward_spliced

    loaded, card = tiny_classifier
    corpus = corpus_of("sample", card, max_examples=8)
    assert corpus.pairs[0] and corpus.classes is not None  # the classifier's own pairs
    acts = collect(loaded, corpus, [1])
    sae = exact_sae(32, 1)
    c = codes(sae, acts.x[1], acts.tokens)
    held = [i for i in acts.tokens.inputs if corpus.heldout[i]]
    first = held[0]
    rows = np.flatnonzero(acts.tokens.example == first)
    f = int(np.argmax(c.z[rows].sum(0)))  # a feature that fires on the first held-out input
    out = class_effects(loaded, sae, acts.x[1], c, [f])
    enc = acts.tokens.encodings[acts.tokens.inputs.index(first)]
    inputs = collate(loaded.tokenizer, [enc])
    delta = torch.from_numpy(c.z[rows][:, f:f + 1] * sae.W_dec[f][None])

    def minus(h):
        return h - delta[None].to(h.dtype)

    p0 = torch.softmax(forward(loaded.model, inputs=inputs, attentions=False)
                       .output.logits.double(), -1)[0]
    p1 = torch.softmax(forward_spliced(loaded.model, inputs, 1, minus, attentions=False)
                       .output.logits.double(), -1)[0]
    n_fire = sum(1 for i in held if (c.z[acts.tokens.example == i][:, f] > 0).any())
    assert out[f]["n"] == n_fire
    if n_fire == 1:
        np.testing.assert_allclose(out[f]["mean"], (p1 - p0).numpy(), atol=1e-5)
    assert len(out[f]["mean"]) == loaded.model.config.num_labels


def test_study_runs_and_its_json_round_trips(tiny_classifier):
    loaded, card = tiny_classifier
    corpus = corpus_of("sample", card, max_examples=20)
    inputs = Inputs(corpus, 1, TrainSettings(m=64, k=4, epochs=2, batch_size=64),
                    annotate=(corpus_of("treebank", None, max_examples=10),), dashboards=5,
                    effects=2)
    result = run(inputs, Models(loaded))
    assert result.corpus["inputs"] == 100 and result.corpus["heldout_inputs"] % 5 == 0
    q = result.quality
    assert q["agreement_kind"] == "classifier" and 0 <= q["agreement"] <= 1
    assert q["l0"] <= 4 and 0 <= q["dead"] <= 1 and q["fve"] < 1
    assert len(result.features["freq"]) == 64 and len(result.dashboards) == 5
    assert set(result.effects) <= set(result.dashboards) and len(result.effects) == 2
    assert result.class_names == ["positive", "neutral", "negative", "conflict", "none"]
    assert "upos" in {r["name"] for d in result.dashboards.values() for r in d["alignment"]}
    data = json.loads(json.dumps(result.to_json(), allow_nan=False))
    assert list(data) == list(SCHEMA.names)
    back = Result.from_json(data)
    assert back.dashboards.keys() == result.dashboards.keys()
    assert back.quality["fve"] == pytest.approx(result.quality["fve"])
    assert back.quality["losses"] == pytest.approx(result.quality["losses"])
    # the tiny random classifier loses nothing when the layer is zeroed: no loss to recover
    if result.quality["losses"]["zero"] <= result.quality["losses"]["clean"]:
        assert data["quality"]["loss_recovered"] is None


def test_cli_train_then_show(tiny_model_dir, tmp_path):
    folder = tiny_model_dir("bert")
    out = tmp_path / "dict"
    r = run_cli("features", "train", "--model", folder, "--data", "treebank", "--layer", "2",
                "--max-examples", "30", "--m", "64", "--k", "4", "--epochs", "2", "--out", out,
                env={"DASHBOARD_CACHE": str(tmp_path / "cache")})  # never the user's cache
    assert r.returncode == 0, r.stderr
    card = json.loads((out / "card.json").read_text())
    assert (card["layer"], card["k"], card["m"], card["d"]) == (2, 4, 64, 32)
    assert card["activation"] == "topk" and card["pre_bias"] is True and card["scale"] > 0
    assert {"fve", "l0", "dead", "agreement", "loss_recovered", "seed"} <= set(card)
    assert card["corpus"] == "the bundled treebank sample"
    assert card["spec"] == str(folder)  # show reads the card's model by default
    shown = tmp_path / "f.json"
    r = run_cli("features", "show", "--dir", out, "--text",
                "The food was great.", "--out", shown)
    assert r.returncode == 0, r.stderr
    view = json.loads(shown.read_text())
    assert view["tokens"][0] == "[CLS]" and len(view["features"]) == len(view["tokens"])
    assert all(1 <= len(f) <= 4 for f in view["features"])
    assert all(a["activation"] > 0 for f in view["features"] for a in f)


@pytest.mark.parametrize("args, message", [
    (["show", "--dir", "nowhere", "--text", "x", "--out", "{tmp}/f.json"], "--dir names no"),
    (["train", "--data", "nothing.txt", "--out", "{tmp}/d"], "--data names no"),
    (["train", "--m", "8", "--k", "9", "--data", "treebank", "--max-examples", "5", "--out",
      "{tmp}/d", "--model", "{model}"], "--k must be at most --m"),
    (["train", "--layer", "7", "--data", "treebank", "--out", "{tmp}/d", "--model",
      "{model}"], "The layer must be from 0"),
])
def test_cli_bad_input_is_one_line(args, message, tmp_path, tiny_model_dir):
    model = str(tiny_model_dir("bert"))
    r = run_cli("features", *[a.format(tmp=tmp_path, model=model) for a in args])
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and message in r.stderr


def test_precomputed_is_read_only_for_its_recipe_and_settings(tmp_path):
    from analysis.core.example import precomputed_path, write_precomputed
    from analysis.features import precomputed

    assert precomputed.load(tmp_path) is None  # none there
    other = {"layer": 3, "settings": {"m": 64}}
    write_precomputed("features", other, "cmd", "2026-01-01", root=tmp_path)
    assert precomputed.load(tmp_path) is None  # made with other settings
    precomputed_path("features", tmp_path).write_text("{not json")
    assert precomputed.load(tmp_path) is None


def test_a_corpus_of_several_parts_keeps_each_parts_labels_and_split():
    from transformers import AutoTokenizer

    from analysis.core.encoding import encode
    from analysis.features.corpus import concat
    from analysis.core.models import default_model_path

    card = {"task": "nli_m", "pair_order": "review-aux", "max_length": 64,
            "heldout_ids": ["s001"]}
    pairs = corpus_of("sample", card, max_examples=4)
    tree = corpus_of("treebank", None, max_examples=6)
    both = concat([pairs, tree], "both")
    assert len(both) == 20 + 6 and both.part == [0] * 20 + [1] * 6
    assert list(both.classes[20:]) == [-1] * 6
    assert both.scored().sum() == 5  # s001's five pairs; the treebank's held-out not scored
    assert both.heldout[20:].sum() == 1  # ... though it keeps its own held-out sentence
    tok = AutoTokenizer.from_pretrained(default_model_path())
    labels = both.piece_labels(20, encode(tok, both.texts[20]))
    assert labels["upos"][1] != "_" and set(labels["role"]) == {"_"}
    first = both.piece_labels(0, encode(tok, both.texts[0], both.pairs[0]))
    assert first["aspect"][1] == "price" and set(first["upos"]) == {"_"}


def test_a_plain_text_corpus_gives_no_annotations_and_the_browser_says_so(tiny_encoder):
    from analysis.core.corpus import read_pasted
    from analysis.features.corpus import feature_corpus
    from ui.features.blocks import alignment_note

    loaded, _ = tiny_encoder
    text = "\n".join(f"Sentence number {i} is about the {w}." for i, w in
                     enumerate(["soup", "staff", "view", "bread", "wine", "music"] * 3))
    corpus = feature_corpus(read_pasted(text), "pasted lines", None, 0)
    assert corpus.label_names == ()
    settings = TrainSettings(m=32, k=4, epochs=2, batch_size=64)
    plain = run(Inputs(corpus, 1, settings, dashboards=3, effects=0), Models(loaded))
    assert plain.corpus["labels"] == [] and plain.corpus["annotations"] == []
    assert all(d["alignment"] == [] for d in plain.dashboards.values())
    assert alignment_note(plain, []).startswith("No annotations: this corpus is plain text")
    # read against the treebank sample: its annotations, named as not the corpus's own
    tree = corpus_of("treebank", None, max_examples=20)
    read = run(Inputs(corpus, 1, settings, annotate=(tree,), dashboards=3, effects=0),
               Models(loaded))
    assert read.corpus["labels"] == [] and read.corpus["annotations"] == ["deprel", "upos"]
    assert "no annotations of its own" in alignment_note(read, [{"name": "upos"}])


def test_the_activations_job_over_shards_equals_the_one_forward_path(tiny_classifier):
    from analysis.core.execution.corpus import run_local, run_sharded
    from analysis.core.execution.work import Study
    from analysis.features.activations import encode_corpus
    from analysis.features.job import ActivationsJob, collect_on, inputs_dataset
    from analysis.features.study import plan

    loaded, card = tiny_classifier
    corpus = corpus_of("sample", card, max_examples=6)
    whole = collect(loaded, corpus, [1, 2])
    encs, kept = encode_corpus(loaded.tokenizer, corpus, 128)
    job = ActivationsJob(loaded.spec, (1, 2), 128, batch_size=4)
    ds = inputs_dataset(corpus, kept)
    sharded = run_sharded(job, loaded, ds, [0, 7, 7, 19, len(ds)])  # an empty shard too
    for layer in (1, 2):
        got = np.concatenate(sharded[layer])
        assert got.shape == whole.x[layer].shape
        np.testing.assert_allclose(got, whole.x[layer], atol=1e-5, rtol=0)
    # the study's own runner: the tokens, labels and split built here from the same encodings
    ran = collect_on(lambda j, m, d, p: run_sharded(j, m, d, [0, 5, len(d)]), loaded, corpus,
                     [1])
    np.testing.assert_allclose(ran.x[1], whole.x[1], atol=1e-5, rtol=0)
    assert ran.tokens.token == whole.tokens.token and ran.tokens.labels == whole.tokens.labels
    assert (ran.tokens.heldout == whole.tokens.heldout).all() and ran.notes == whole.notes
    # the plan is a study of corpus jobs; in this process it is today's computation
    inputs = Inputs(corpus, 1, TrainSettings(m=32, k=4, epochs=2, batch_size=64),
                    dashboards=2, effects=0, spec=loaded.spec)
    work = plan(inputs, Models(loaded))
    assert isinstance(work, Study) and work.spec == loaded.spec and work.size == len(corpus)
    here = work.study(lambda f, t: None, run_local)
    shards = work.study(lambda f, t: None,
                        lambda j, m, d, p=None: run_sharded(j, m, d, [0, 11, len(d)]))
    np.testing.assert_allclose(shards.live.acts.x[1], here.live.acts.x[1], atol=1e-5, rtol=0)
    np.testing.assert_allclose(shards.live.sae.W_dec, here.live.sae.W_dec, atol=1e-4, rtol=0)
    assert shards.quality["fve"] == pytest.approx(here.quality["fve"], abs=1e-4)
