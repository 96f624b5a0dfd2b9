// Generated from ui/common/views.py (constants_js): edit it there; the
// bundle takes this text from Python and a test checks this file matches it.

export const PAYLOAD_VERSION = 1;
export const VIEWS_VERSION = 2;
export const SCALE = 255;
export const SEGMENTS = ["All", "A->A", "B->B", "A->B", "B->A"];
export const VIEW_KINDS = ["head", "model", "heatmap"];
export const PIN_SIDES = ["from", "to"];
export const STATE_KEYS = ["view", "layer", "heads", "pin", "segment"];
