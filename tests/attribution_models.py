"""Tiny models for the attribution tests: a seeded 2-layer BERT classifier (3 labels) with
the default model's WordPiece tokenizer, built from a config (no download)."""

from __future__ import annotations

from pathlib import Path

_MADE: dict[str, Path] = {}


def tiny_classifier_dir(tmp_path_factory, arch: str = "bert") -> Path:
    """A folder holding a randomly initialised (seeded) tiny sequence classifier."""
    import torch
    import transformers as T
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from analysis.core.models import default_model_path

    if arch not in _MADE:
        torch.manual_seed(0)
        common = dict(vocab_size=30522, max_position_embeddings=130, hidden_size=32,
                      num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
                      num_labels=3, initializer_range=0.1,
                      id2label={0: "negative", 1: "neutral", 2: "positive"},
                      label2id={"negative": 0, "neutral": 1, "positive": 2})
        cfg = T.BertConfig(**common) if arch == "bert" else T.RobertaConfig(
            type_vocab_size=2, **common)
        model = AutoModelForSequenceClassification.from_config(cfg)
        with torch.no_grad():  # non-zero biases, so that the decomposition's bias terms count
            for name, p in model.named_parameters():
                if name.endswith("bias"):
                    p.normal_(0, 0.05)
            model.classifier.weight.normal_(0, 1.0)  # a decided classifier, not a flat one
        folder = tmp_path_factory.mktemp(f"tiny-cls-{arch}")
        model.save_pretrained(folder)
        AutoTokenizer.from_pretrained(default_model_path()).save_pretrained(folder)
        _MADE[arch] = folder
    return _MADE[arch]


_LOADED: dict = {}


def tiny_classifier(tmp_path_factory, arch: str = "bert"):
    """The tiny classifier loaded with its head (once per test session; read-only)."""
    from analysis.attribution import load_for_attribution

    if arch not in _LOADED:
        _LOADED[arch] = load_for_attribution(str(tiny_classifier_dir(tmp_path_factory, arch)))
    return _LOADED[arch]
