"""What a held model costs in memory (analysis/core/sizes.py, issue 30 item 4): the working memory
of
one input from a config's shape, hand-computed on a tiny config, held to the peaks measured at
three real shapes (bench/README.md, "Sizes"), and a visitor's peak (weights of every model, the
largest working memory once)."""

from __future__ import annotations

import pytest

from analysis.core.errors import InputError
from analysis.core.sizes import (MEASURED_RISE_512_MIB, ModelCost, gigabytes, visitor_peak,
                            working_bytes)

SHAPES = {  # the published configs' shape keys (stand-ins: bench/sizes/standins.py)
    "embedded": {"hidden_size": 384, "num_hidden_layers": 6, "num_attention_heads": 12,
                 "intermediate_size": 1536},
    "bert-base": {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
                  "intermediate_size": 3072},
    "bert-large": {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
                   "intermediate_size": 4096},
}


def test_working_memory_by_hand_on_a_tiny_config():
    config = {"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
              "intermediate_size": 32}
    # maps: 2 layers x 2 heads x 10 x 10 x 4 bytes = 1,600; x 4 copies = 6,400
    # activations: 2 layers x 10 tokens x (8 + 32) x 4 bytes = 3,200
    assert working_bytes(config, 10) == 6_400 + 3_200
    assert working_bytes(config, 0) == 0
    # DistilBERT's names for the same dimensions
    distil = {"dim": 8, "n_layers": 2, "n_heads": 2, "hidden_dim": 32}
    assert working_bytes(distil, 10) == 9_600


def test_working_memory_follows_the_measured_peaks():
    """Within -10% / +25% of the first view's measured rise at 512 tokens at every size
    measured (the largest one-input peak at each); never below them by more than 10%."""
    for name, config in SHAPES.items():
        ratio = working_bytes(config, 512) / (MEASURED_RISE_512_MIB[name] * 2**20)
        assert 0.9 <= ratio <= 1.25, (name, ratio)
    # quadratic in the tokens where the maps dominate
    big = SHAPES["bert-large"]
    assert 3.5 < working_bytes(big, 512) / working_bytes(big, 256) < 4


def test_a_config_without_a_size_is_refused_in_one_line():
    with pytest.raises(InputError, match="names no hidden size"):
        working_bytes({"num_hidden_layers": 2}, 10)


def test_a_visitors_peak_counts_every_weight_and_one_working_memory():
    a = ModelCost.of(SHAPES["bert-base"], 110_000_000, 256)
    b = ModelCost.of(None, 22_000_000, 256)  # shape unknown yet: its weights alone
    assert a.weights == 440_000_000 and b.working == 0
    assert visitor_peak([a, b]) == a.weights + b.weights + a.working
    assert visitor_peak([]) == 0
    assert gigabytes(3 * 2**29) == "1.50 GB"
