"""The bench's stand-in models (bench/sizes/standins.py, issue 30): their configs have the
published shapes of bert-base-uncased, bert-large-uncased, roberta-base and
distilbert-base-uncased, and a (tiny) stand-in of each family loads through the dashboard's own
loader."""

from __future__ import annotations

import pytest

from bench.sizes import standins

# From each model's config.json on the Hugging Face hub (layers, heads, hidden, intermediate,
# vocab, max positions), written out here again so a typo in standins.CONFIGS is caught.
HUB = {
    "bert-base-uncased": (12, 12, 768, 3072, 30522, 512),
    "bert-large-uncased": (24, 16, 1024, 4096, 30522, 512),
    "roberta-base": (12, 12, 768, 3072, 50265, 514),
    "distilbert-base-uncased": (6, 12, 768, 3072, 30522, 512),
}


@pytest.mark.parametrize("name", sorted(HUB))
def test_config_has_the_published_shape(name):
    config = standins.make_config(standins.CONFIGS[name], "nli_m")
    assert standins.shape(config) == HUB[name]
    assert standins.PUBLISHED[name][:6] == HUB[name]


@pytest.mark.parametrize("name", ["bert-base-uncased", "bert-large-uncased"])
def test_parameter_count_matches_the_published_size(name):
    """The parameters the dashboard's size check reads from the config alone (analysis.core.sizes,
    an upper estimate with pooler and head) are within 2% of the published 110M / 340M."""
    from analysis.core.sizes import config_params

    n = config_params(dict(standins.CONFIGS[name]))
    published = standins.PUBLISHED[name][6] * 1e6
    assert abs(n - published) / published < 0.02


@pytest.mark.parametrize("name", sorted(HUB))
def test_tiny_standin_loads_through_the_dashboards_loader(name, tmp_path):
    from analysis.absa.checkpoints import load_checkpoint
    from analysis.absa.tasks import num_labels
    from analysis.core.models import load_model

    base, clf = standins.build(name, tmp_path, tiny=True)
    loaded = load_model(str(base), device="cpu")
    assert (loaded.n_layers, loaded.n_heads) == (2, 2)
    assert loaded.model_type == standins.CONFIGS[name]["model_type"]
    assert loaded.max_length == 512  # RoBERTa: 514 positions less its two reserved ones
    enc = loaded.tokenizer("the food", "what about it ?")
    takes_types = name.startswith("bert-")
    assert ("token_type_ids" in enc) is takes_types
    assert loaded.tokenizer.vocab_size == 30522  # the embedded model's WordPiece vocabulary

    classifier, card = load_checkpoint(str(clf))
    assert type(classifier.model).__name__.endswith("ForSequenceClassification")
    assert classifier.model.config.num_labels == num_labels(card["task"])
    # the classifier's encoder is the saved encoder: same seeded weights, same hidden states
    import torch

    ids = loaded.tokenizer("the food was great", return_tensors="pt")
    with torch.inference_mode():
        a = loaded.model(**ids).last_hidden_state
        b = getattr(classifier.model, classifier.model.base_model_prefix)(**ids).last_hidden_state
    assert torch.allclose(a, b, atol=1e-6)
    # built again without force: the folder is kept as it is
    stamp = (base / "model.safetensors").stat().st_mtime_ns
    standins.build(name, tmp_path, tiny=True)
    assert (base / "model.safetensors").stat().st_mtime_ns == stamp
