// Generated from ui/common/attention/contract.py by `python -m ui.common.attention.build`: edit it there;
// a test checks this file equals a fresh generation.

export const PAYLOAD_VERSION = 1;
export const VIEWS_VERSION = 2;
export const SCALE = 255;
export const SEGMENTS = ["All", "A->A", "B->B", "A->B", "B->A"];
export const VIEW_KINDS = ["head", "model", "heatmap"];
export const PIN_SIDES = ["from", "to"];
export const STATE_KEYS = ["view", "layer", "heads", "pin", "segment"];
