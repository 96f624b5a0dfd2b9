// Generated from analysis/attention/payload_spec.py by `python -m ui.common.attention.build`: edit it there;
// a test checks this file equals a fresh generation.

export const MAKERS_MODULE = "analysis.attention.views";

export const PAYLOADS = {
  "views": {
    "version": 2, "maker": "views_payload", "fields": [
      {"name": "view", "type": "string", "required": true, "choices": ["views"]},
      {"name": "version", "type": "int", "required": true, "choices": [2]},
      {"name": "n_layers", "type": "int", "required": true},
      {"name": "n_heads", "type": "int", "required": true},
      {"name": "n", "type": "int", "required": true},
      {"name": "labels", "type": "list", "required": true, "length": ["n", "tokens"], "items": "string"},
      {"name": "segments", "type": "list", "required": true, "choices": [0, 1], "length": ["n", "tokens"], "items": "int"},
      {"name": "special", "type": "list", "required": true, "choices": [0, 1], "length": ["n", "tokens"], "items": "int"},
      {"name": "is_pair", "type": "bool", "required": true},
      {"name": "scale", "type": "int", "required": true, "choices": [255]},
      {"name": "size", "type": "int", "required": true},
      {"name": "pool", "type": "string", "required": true, "choices": ["max", "none"]},
      {"name": "thumbs", "type": "base64", "required": true, "unless": "heatmap"},
      {"name": "encoding", "type": "string", "required": true, "choices": ["dense", "sparse"]},
      {"name": "top_k", "type": "int", "required": true, "nullable": true},
      {"name": "layers", "type": "list", "required": true, "unless": "heatmap", "length": ["n_layers", "layers"], "items": [{"name": "weights", "type": "base64", "required": true}, {"name": "counts", "type": "base64", "required": false, "when": ["encoding", "sparse"]}, {"name": "keys", "type": "base64", "required": false, "when": ["encoding", "sparse"]}, {"name": "n_edges", "type": "int", "required": false, "when": ["encoding", "sparse"]}]},
      {"name": "digest", "type": "string", "required": true},
      {"name": "heatmap", "type": "object", "required": false, "items": [{"name": "layer", "type": "int", "required": true}, {"name": "head", "type": "int", "required": true}, {"name": "n", "type": "int", "required": true}, {"name": "max", "type": "number", "required": true}, {"name": "weights", "type": "base64", "required": true}]},
    ],
  },
  "head": {
    "version": 1, "maker": "head_view_payload", "fields": [
      {"name": "view", "type": "string", "required": true, "choices": ["head"]},
      {"name": "version", "type": "int", "required": true, "choices": [1]},
      {"name": "layer", "type": "int", "required": true},
      {"name": "n_heads", "type": "int", "required": true},
      {"name": "n", "type": "int", "required": true},
      {"name": "labels", "type": "list", "required": true, "length": ["n", "tokens"], "items": "string"},
      {"name": "segments", "type": "list", "required": true, "choices": [0, 1], "length": ["n", "tokens"], "items": "int"},
      {"name": "special", "type": "list", "required": true, "choices": [0, 1], "length": ["n", "tokens"], "items": "int"},
      {"name": "is_pair", "type": "bool", "required": true},
      {"name": "top_k", "type": "int", "required": true, "nullable": true},
      {"name": "threshold", "type": "number", "required": true},
      {"name": "scale", "type": "int", "required": true, "choices": [255]},
      {"name": "highlight", "type": "list", "required": true, "items": "int"},
      {"name": "encoding", "type": "string", "required": true, "choices": ["dense", "sparse"]},
      {"name": "weights", "type": "base64", "required": true},
      {"name": "counts", "type": "base64", "required": false, "when": ["encoding", "sparse"]},
      {"name": "keys", "type": "base64", "required": false, "when": ["encoding", "sparse"]},
      {"name": "n_edges", "type": "int", "required": true},
    ],
  },
  "model": {
    "version": 1, "maker": "model_view_payload", "fields": [
      {"name": "view", "type": "string", "required": true, "choices": ["model"]},
      {"name": "version", "type": "int", "required": true, "choices": [1]},
      {"name": "n_layers", "type": "int", "required": true},
      {"name": "n_heads", "type": "int", "required": true},
      {"name": "n", "type": "int", "required": true},
      {"name": "size", "type": "int", "required": true},
      {"name": "pool", "type": "string", "required": true, "choices": ["max", "none"]},
      {"name": "thumbs", "type": "base64", "required": true},
      {"name": "scale", "type": "int", "required": true, "choices": [255]},
    ],
  },
};
