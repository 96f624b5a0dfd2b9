// Head colours and the segment filter of the head view (no DOM: Node tests import it).

import { SEGMENTS } from "./constants.js";

// 20 distinguishable head colours (12 heads in BERT-base / MiniLM, 16 in BERT-large).
export const HEAD_COLOURS = [
  "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
  "#e377c2", "#7f7f7f", "#a8a41c", "#139fb0", "#393b79", "#ad494a",
  "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d",
  "#31a354", "#756bb1",
];

export function headColour(h) {
  if (h < HEAD_COLOURS.length) return HEAD_COLOURS[h];
  return `hsl(${(h * 137.508) % 360}, 60%, 45%)`;
}

export const SEG_COLOURS = ["#8fb3de", "#f3b37a"]; // A, B
export const SEGMENT_LABELS = Object.fromEntries(SEGMENTS.map((s) => [s, s.replace("->", "\u2192")]));

// Is a line from a query of segment segQ to a key of segment segK shown under `filter`?
// (analysis/encoding.py documents the same rule as a matrix.)
export function segmentAllows(filter, segQ, segK) {
  switch (filter) {
    case "A->A": return segQ === 0 && segK === 0;
    case "B->B": return segQ === 1 && segK === 1;
    case "A->B": return segQ === 0 && segK === 1;
    case "B->A": return segQ === 1 && segK === 0;
    default: return true;
  }
}

// Is a token of segment `seg` in column `side` ("from" | "to") active under `filter`?
export function sideAllows(filter, side, seg) {
  if (filter === "All") return true;
  const [from, to] = filter.split("->");
  return (side === "from" ? from : to) === (seg === 0 ? "A" : "B");
}

// The head view title's account of the heads shown (0-indexed `visible`, sorted).
export function headsText(visible, H) {
  if (visible.length === H) return `all ${H} heads`;
  if (visible.length === 0) return "no heads";
  if (visible.length === 1) return `head ${visible[0] + 1}`;
  if (visible.length > 6) return `${visible.length} of ${H} heads`;
  return `heads ${visible.map((h) => h + 1).join(", ")}`;
}
