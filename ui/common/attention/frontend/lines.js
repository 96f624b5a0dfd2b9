// Which lines the head view draws, from a layer's decoded edges (payload.js decodeEdges):
// the weight floor that keeps a long input quick, the opacity buckets, the weights shown beside
// a focused token. No DOM: Node tests import it.

import { segmentAllows } from "./heads.js";

export const N_BUCKETS = 20; // opacity levels; lines of one head and level share one <path>
export const MIN_Q_ALL = 3; // without a focus token, weights below 3/255 are not drawn (invisible)
export const LINE_BUDGET = 8000; // ... and at most this many lines, the strongest

// The smallest 8-bit weight drawn without a focus token: at most `budget` lines of the
// `visible` heads pass the segment filter, the weakest (faintest) going first.
export function minWeightShown(edges, visible, n, seg, segment, budget = LINE_BUDGET) {
  const hist = new Uint32Array(256);
  for (const h of visible) {
    for (let i = 0; i < n; i++) {
      const r = h * n + i;
      for (let e = edges.rowStart[r]; e < edges.rowStart[r + 1]; e++) {
        if (segment === "All" || segmentAllows(segment, seg[i], seg[edges.keys[e]])) hist[edges.wts[e]]++;
      }
    }
  }
  let total = 0, q = 255;
  for (; q >= MIN_Q_ALL; q--) {
    if (total + hist[q] > budget) return q + 1;
    total += hist[q];
  }
  return MIN_Q_ALL;
}

// Opacity bucket of an 8-bit weight (drawn at opacity (b + 0.5) / N_BUCKETS).
export function bucketOf(q) {
  return Math.min(N_BUCKETS - 1, Math.floor((q * N_BUCKETS) / 256));
}

// Head h's lines with weight >= minQ through the segment filter and the focus token
// (f = {side, index} or null), as path(i, j) strings grouped by opacity bucket.
export function lineBuckets(edges, h, n, seg, segment, f, minQ, path) {
  const buckets = Array.from({ length: N_BUCKETS }, () => []);
  const i0 = f && f.side === "from" ? f.index : 0;
  const i1 = f && f.side === "from" ? f.index + 1 : n;
  const onlyKey = f && f.side === "to" ? f.index : -1;
  for (let i = i0; i < i1; i++) {
    const r = h * n + i;
    for (let e = edges.rowStart[r]; e < edges.rowStart[r + 1]; e++) {
      const q = edges.wts[e];
      if (q < minQ) continue;
      const j = edges.keys[e];
      if (onlyKey >= 0 && j !== onlyKey) continue;
      if (!segmentAllows(segment, seg[i], seg[j])) continue;
      buckets[bucketOf(q)].push(path(i, j));
    }
  }
  return buckets;
}

// The focused token's partners under head h as [position, q] (q >= 2: at least 0.01 once
// rounded), through the segment filter: its keys (side "from") or its queries (side "to").
export function partnerWeights(edges, h, n, seg, segment, f) {
  const out = [];
  if (f.side === "from") {
    const r = h * n + f.index;
    for (let e = edges.rowStart[r]; e < edges.rowStart[r + 1]; e++) {
      const j = edges.keys[e];
      if (segmentAllows(segment, seg[f.index], seg[j])) out.push([j, edges.wts[e]]);
    }
  } else {
    for (let i = 0; i < n; i++) {
      if (!segmentAllows(segment, seg[i], seg[f.index])) continue;
      const r = h * n + i;
      for (let e = edges.rowStart[r]; e < edges.rowStart[r + 1]; e++) {
        if (edges.keys[e] === f.index) { out.push([i, edges.wts[e]]); break; }
      }
    }
  }
  return out.filter(([, q]) => q >= 2);
}
