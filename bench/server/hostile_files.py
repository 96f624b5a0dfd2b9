"""The hostile benchmark's crafted files (bench/server/hostile.py): reports whose charts claim
23,000 x 23,000 px or take 213 s to draw, report.json nested 100,000 levels deep or holding a
1,000,000-digit integer, a checkpoint .zip whose config declares a 637M-parameter BERT, and
issue 34's: the quadratic-JSON safetensors header and JSONL, a checkpoint whose weights miss
the model's tensors, 300 lines at the demo's 2,000-character cap."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np

BIG_CONFIG = {"model_type": "bert", "architectures": ["BertForSequenceClassification"],
              "hidden_size": 1024, "num_hidden_layers": 48, "num_attention_heads": 16,
              "intermediate_size": 4096, "vocab_size": 30522, "max_position_embeddings": 512,
              "type_vocab_size": 2, "num_labels": 5}


def crafted(folder: Path) -> dict[str, Path]:
    """The crafted files, written to ``folder``."""
    from analysis.core.models import default_model_path

    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="23000" height="23000">'
           '<rect width="23000" height="23000" fill="#3b6fd8"/></svg>')
    squares = "".join(f'<rect x="{i}" y="{i}" width="2000" height="2000" fill="#3b6fd8" '
                      f'opacity="0.1"/>' for i in range(200))
    slow = ('<svg xmlns="http://www.w3.org/2000/svg" width="2828" height="2828">' + squares
            + "</svg>")
    head = {"format": "attention-dashboard-report", "version": 1}
    files = {
        "big_png": json.dumps({**head, "findings": [{"title": "big", "svg": svg}]}),
        "slow_png": json.dumps({**head, "findings": [{"title": "slow", "svg": slow}]}),
        "deep": json.dumps(head)[:-1] + ', "findings": ' + "[" * 100_000 + "]" * 100_000 + "}",
        "huge_int": json.dumps(head)[:-1] + ', "findings": [{"title": "x", "rows": [['
                    + "1" * 1_000_000 + "]]}]}",
    }
    out = {}
    for name, text in files.items():
        out[name] = folder / f"{name}.json"
        out[name].write_text(text, encoding="utf-8")
    header = json.dumps({"classifier.bias": {"dtype": "F32", "shape": [5],
                                             "data_offsets": [0, 20]}}).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("config.json", json.dumps(BIG_CONFIG))
        zf.writestr("model.safetensors", len(header).to_bytes(8, "little") + header + b"\0" * 20)
        zf.write(Path(default_model_path()) / "tokenizer.json", "tokenizer.json")
        zf.writestr("absa_card.json", json.dumps({"task": "qa_m", "kind": "absa-sentence-pair"}))
    out["big_zip"] = folder / "big-model.zip"
    out["big_zip"].write_bytes(buf.getvalue())
    out.update(crafted_issue34(folder))
    return out


def _checkpoint_zip(config: dict, weights: bytes) -> bytes:
    from analysis.core.models import default_model_path

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("config.json", json.dumps(config))
        zf.writestr("model.safetensors", weights)
        zf.write(Path(default_model_path()) / "tokenizer.json", "tokenizer.json")
        zf.writestr("absa_card.json", json.dumps({"task": "qa_m", "kind": "absa-sentence-pair"}))
    return buf.getvalue()


def crafted_issue34(folder: Path) -> dict[str, Path]:
    """Issue 34's crafted files: the quadratic-JSON header and JSONL, the checkpoint whose
    weights miss the model's tensors, 300 lines at the demo's 2,000-character cap."""
    from analysis.core.models import default_model_path

    pattern = '[' + '\\"' * (8 << 20)  # 16 MB of [\"\"\"...: deflates to about 300 KB
    header = pattern.encode()
    config = json.loads((Path(default_model_path()) / "config.json").read_text())
    config.update(architectures=["BertForSequenceClassification"], num_labels=4)
    one = json.dumps({"unrelated.weight": {"dtype": "F32", "shape": [4],
                                           "data_offsets": [0, 16]}}).encode()
    rng = np.random.default_rng(34)
    words = "the pasta was cold but the staff were kind and quick to help us".split()
    lines = [" ".join(rng.choice(words, 400))[:2000] for _ in range(300)]
    files = {
        "json_zip": _checkpoint_zip(config, len(header).to_bytes(8, "little") + header),
        "json_jsonl": ('{"text": "' + '\\"' * (32 << 10) + '"}\n').encode(),
        "missing_zip": _checkpoint_zip(config, len(one).to_bytes(8, "little") + one + b"\0" * 16),
        "drift_txt": ("\n".join(lines) + "\n").encode(),
    }
    names = {"json_zip": "quadratic-header.zip", "json_jsonl": "quadratic.jsonl",
             "missing_zip": "missing-weights.zip", "drift_txt": "drift-300x2000.txt"}
    out = {}
    for key, data in files.items():
        out[key] = folder / names[key]
        out[key].write_bytes(data)
    return out
