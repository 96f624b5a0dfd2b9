// Decoding and checking the payloads of analysis.attention.views (no DOM: Node tests import it).

import { PIN_SIDES } from "./constants.js";
import { MAKERS_MODULE, PAYLOADS } from "./payload_spec.js";

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

// The contract: analysis/attention/payload_spec.py, generated into payload_spec.js. This check
// is the twin of ui/common/attention/contract.py payload_problem: same order, same messages.
function typeOk(v, type) {
  switch (type) {
    case "int": return Number.isInteger(v);
    case "number": return typeof v === "number" && Number.isFinite(v);
    case "bool": return typeof v === "boolean";
    case "string": return typeof v === "string";
    case "base64": return typeof v === "string" && v.length % 4 === 0;
    case "list": return Array.isArray(v);
    default: return !!v && typeof v === "object" && !Array.isArray(v);
  }
}

function needed(f, root) {
  if (f.required) return !f.unless || root[f.unless] === undefined || root[f.unless] === null;
  return !!f.when && root[f.when[0]] === f.when[1];
}
const absent = (obj, f) => obj[f.name] === undefined || (obj[f.name] === null && !f.nullable);
const json = (v) => JSON.stringify(v ?? null);

function fieldsProblem(obj, fields, root, where, path) {
  const missing = fields.filter((f) => needed(f, root) && absent(obj, f)).map((f) => path + f.name);
  if (missing.length) return `The payload of ${where} lacks ${missing.join(", ")}.`;
  for (const f of fields) {
    const value = obj[f.name];
    if (value === undefined || value === null) continue;
    const name = path + f.name;
    if (!typeOk(value, f.type)) return `The payload of ${where} has ${name} of another type than ${f.type}.`;
    const values = f.type === "list" ? value : [value];
    if (f.choices) {
      const bad = values.find((v) => !f.choices.includes(v));
      if (bad !== undefined) {
        return `The payload of ${where} has ${name} ${json(bad)}, not ${f.choices.map(json).join(", ")}.`;
      }
    }
    if (f.length && value.length !== root[f.length[0]]) {
      return `The payload of ${where} has ${value.length} ${f.name} for ${json(root[f.length[0]])} ${f.length[1]}.`;
    }
    if (typeof f.items === "string" && !values.every((v) => typeOk(v, f.items))) {
      return `The payload of ${where} has an item of ${name} of another type than ${f.items}.`;
    }
    if (Array.isArray(f.items)) {
      for (let i = 0; i < values.length; i++) {
        const at = f.type === "list" ? `${name}[${i}].` : `${name}.`;
        if (!typeOk(values[i], "object")) return `The payload of ${where} has ${at.slice(0, -1)} of another type than object.`;
        const got = fieldsProblem(values[i], f.items, root, where, at);
        if (got) return got;
      }
    }
  }
  return null;
}

// null when `data` is a payload of `kind` ("views" | "head" | "model") this code draws, else
// the reason in one sentence (the component shows it instead of drawing).
export function checkPayload(data, kind) {
  if (!data || typeof data !== "object") return "The view received no data.";
  const spec = PAYLOADS[kind];
  const maker = `${MAKERS_MODULE}.${spec.maker}`;
  if (data.view !== kind) return `This view needs a payload from ${maker} (got view ${json(data.view)}).`;
  if (data.version !== spec.version) {
    return `This view draws payload version ${spec.version} of ${maker}, got ` +
      `${json(data.version)}: reload the page.`;
  }
  return fieldsProblem(data, spec.fields, data, maker, "");
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
