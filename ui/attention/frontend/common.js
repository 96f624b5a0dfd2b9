// Shared helpers for the attention views (plain JS, no dependencies, shipped in the repo).
// Token labels are user text: they only ever become text nodes (textContent / createTextNode),
// never markup.

const SVG_NS = "http://www.w3.org/2000/svg";

// 20 distinguishable head colours (12 heads in BERT-base / MiniLM, 16 in BERT-large).
const HEAD_COLOURS = [
  "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
  "#e377c2", "#7f7f7f", "#a8a41c", "#139fb0", "#393b79", "#ad494a",
  "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d",
  "#31a354", "#756bb1",
];

function headColour(h) {
  if (h < HEAD_COLOURS.length) return HEAD_COLOURS[h];
  return `hsl(${(h * 137.508) % 360}, 60%, 45%)`;
}

// HTML element with attributes and text / element children (strings become text nodes).
function hEl(tag, attrs, ...children) {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  appendChildren(node, children);
  return node;
}

// SVG element, same conventions.
function sEl(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  setAttrs(node, attrs);
  appendChildren(node, children);
  return node;
}

function setAttrs(node, attrs) {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    node.setAttribute(k, v === true ? "" : String(v));
  }
}

function appendChildren(node, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(typeof child === "string" || typeof child === "number"
      ? document.createTextNode(String(child)) : child);
  }
}

function b64Bytes(text) {
  const bin = atob(text || "");
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function b64Uint16(text) {
  const bytes = b64Bytes(text);
  const view = new DataView(bytes.buffer);
  const out = new Uint16Array(bytes.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = view.getUint16(2 * i, true);
  return out;
}

function safeName(name) {
  return String(name).replace(/[^A-Za-z0-9_.-]+/g, "_") || "view";
}

function downloadBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = safeName(filename);
  a.style.display = "none";
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 4000);
}

function svgMarkup(svg) {
  const clone = svg.cloneNode(true);
  clone.setAttribute("xmlns", SVG_NS);
  return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(clone);
}

function downloadSvg(svg, filename) {
  downloadBlob(new Blob([svgMarkup(svg)], { type: "image/svg+xml" }), filename);
}

// Rasterise a standalone SVG element (no external resources) to a PNG blob.
function svgToPng(svg, width, height, scale) {
  return new Promise((resolve, reject) => {
    const url = URL.createObjectURL(new Blob([svgMarkup(svg)], { type: "image/svg+xml" }));
    const img = new Image();
    img.onload = () => {
      const canvas = document.createElement("canvas");
      canvas.width = Math.ceil(width * scale);
      canvas.height = Math.ceil(height * scale);
      const ctx = canvas.getContext("2d");
      ctx.fillStyle = "#ffffff";
      ctx.fillRect(0, 0, canvas.width, canvas.height);
      ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
      URL.revokeObjectURL(url);
      canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error("PNG export failed"))),
        "image/png");
    };
    img.onerror = () => { URL.revokeObjectURL(url); reject(new Error("SVG could not be rasterised")); };
    img.src = url;
  });
}

// Text width measurement for layout (canvas, same font as the SVG).
const _measureCtx = document.createElement("canvas").getContext("2d");
function textWidth(text, font) {
  _measureCtx.font = font;
  return _measureCtx.measureText(text).width;
}

const FONT_STACK = 'ui-sans-serif, system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", "Noto Sans", "DejaVu Sans", Arial, sans-serif';

// Per-mount UI state that survives re-invocations with new data (layer switch etc.).
const _viewState = new WeakMap();
function viewState(parent, init) {
  let st = _viewState.get(parent);
  if (!st) { st = init(); _viewState.set(parent, st); }
  return st;
}

function toolButton(label, title, onClick, extra) {
  const b = hEl("button", { type: "button", class: "av-btn", title, ...(extra || {}) }, label);
  b.addEventListener("click", onClick);
  return b;
}

// A head view layer's edges from its payload (dense or sparse, 8-bit weights): per row
// (head * n + query) the range rowStart[r]..rowStart[r+1] of keys and weights.
function decodeEdges(data) {
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
