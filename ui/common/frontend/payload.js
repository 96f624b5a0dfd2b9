// Decoding and checking the payloads of analysis.attention.views (no DOM: Node tests import it).

import { PAYLOAD_VERSION, PIN_SIDES, VIEWS_VERSION } from "./constants.js";

export function b64Bytes(text) {
  const bin = atob(text || "");
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function b64Uint16(text) {
  const bytes = b64Bytes(text);
  const view = new DataView(bytes.buffer);
  const out = new Uint16Array(bytes.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = view.getUint16(2 * i, true);
  return out;
}

const VERSIONS = { views: VIEWS_VERSION, head: PAYLOAD_VERSION, model: PAYLOAD_VERSION };
const MAKERS = { views: "views_payload", head: "head_view_payload", model: "model_view_payload" };
const NEEDS = {
  views: ["n_layers", "n_heads", "n", "labels", "segments", "special", "encoding"],
  head: ["n_heads", "n", "labels", "segments", "special", "encoding", "weights"],
  model: ["n_layers", "n_heads", "n", "size", "thumbs"],
};

// null when `data` is a payload of `kind` ("views" | "head" | "model") this code draws, else
// the reason in one sentence (the component shows it instead of drawing).
export function checkPayload(data, kind) {
  if (!data || typeof data !== "object") return "The view received no data.";
  const maker = `analysis.attention.views.${MAKERS[kind]}`;
  if (data.view !== kind) return `This view needs a payload from ${maker} (got view ${JSON.stringify(data.view ?? null)}).`;
  if (data.version !== VERSIONS[kind]) {
    return `This view draws payload version ${VERSIONS[kind]} of ${maker}, got ` +
      `${JSON.stringify(data.version ?? null)}: reload the page.`;
  }
  const missing = NEEDS[kind].filter((k) => data[k] === undefined || data[k] === null);
  if (missing.length) return `The payload of ${maker} lacks ${missing.join(", ")}.`;
  if (data.labels && data.labels.length !== data.n) return `The payload has ${data.labels.length} labels for ${data.n} tokens.`;
  return null;
}

// A head view layer's edges from its payload (dense or sparse, 8-bit weights): per row
// (head * n + query) the range rowStart[r]..rowStart[r+1] of keys and weights.
export function decodeEdges(data) {
  const H = data.n_heads, n = data.n;
  const w8 = b64Bytes(data.weights);
  const rows = H * n;
  const rowStart = new Uint32Array(rows + 1);
  let keys, wts;
  if (data.encoding === "sparse") {
    const counts = b64Uint16(data.counts);
    for (let r = 0; r < rows; r++) rowStart[r + 1] = rowStart[r] + counts[r];
    keys = b64Uint16(data.keys);
    wts = w8;
  } else {
    let total = 0;
    for (let k = 0; k < w8.length; k++) if (w8[k] > 0) total++;
    keys = new Uint16Array(total);
    wts = new Uint8Array(total);
    let e = 0;
    for (let r = 0; r < rows; r++) {
      const base = r * n;
      for (let j = 0; j < n; j++) {
        const q = w8[base + j];
        if (q > 0) { keys[e] = j; wts[e] = q; e++; }
      }
      rowStart[r + 1] = e;
    }
  }
  return { rowStart, keys, wts };
}

// A pin asked for by the page: {side, index} -> {side, index, token}, or null when invalid.
export function validPin(p, labels) {
  const ok = p && PIN_SIDES.includes(p.side) && Number.isInteger(p.index) &&
    p.index >= 0 && p.index < labels.length;
  return ok ? { side: p.side, index: p.index, token: String(labels[p.index]) } : null;
}

// Heads asked for by the page (0-indexed), invalid ones dropped; none valid: every head.
export function headSet(heads, H) {
  const wanted = Array.isArray(heads) ? heads.filter((h) => Number.isInteger(h) && h >= 0 && h < H) : [];
  return new Set(wanted.length ? wanted : [...Array(H).keys()]);
}

export function headList(visible) {
  return Array.from(visible).sort((a, b) => a - b);
}
