// DOM helpers shared by the attention views (plain JS, no dependencies, shipped in the repo).
// Token labels are user text: they only ever become text nodes (textContent / createTextNode),
// never markup.

export const SVG_NS = "http://www.w3.org/2000/svg";

export const FONT_STACK = 'ui-sans-serif, system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", "Noto Sans", "DejaVu Sans", Arial, sans-serif';

// HTML element with attributes and text / element children (strings become text nodes).
export function hEl(tag, attrs, ...children) {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  appendChildren(node, children);
  return node;
}

// SVG element, same conventions.
export function sEl(tag, attrs, ...children) {
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

function safeName(name) {
  return String(name).replace(/[^A-Za-z0-9_.-]+/g, "_") || "view";
}

export function downloadBlob(blob, filename) {
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

export function downloadSvg(svg, filename) {
  downloadBlob(new Blob([svgMarkup(svg)], { type: "image/svg+xml" }), filename);
}

// Rasterise a standalone SVG element (no external resources) to a PNG blob.
export function svgToPng(svg, width, height, scale) {
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
let measureCtx = null;
export function textWidth(text, font) {
  if (!measureCtx) measureCtx = document.createElement("canvas").getContext("2d");
  measureCtx.font = font;
  return measureCtx.measureText(text).width;
}

// Per-mount UI state that survives re-invocations with new data (layer switch etc.).
const mountState = new WeakMap();
export function viewState(parent, init) {
  let st = mountState.get(parent);
  if (!st) { st = init(); mountState.set(parent, st); }
  return st;
}

export function toolButton(label, title, onClick, extra) {
  const b = hEl("button", { type: "button", class: "av-btn", title, ...(extra || {}) }, label);
  b.addEventListener("click", onClick);
  return b;
}

// Timings the browser tests and bench/ read (window.__viewTimings).
export function viewTiming(kind, ms, extra) {
  window.__viewTimings = window.__viewTimings || [];
  window.__viewTimings.push({ kind, ms, ...(extra || {}) });
  if (window.__viewTimings.length > 2000) window.__viewTimings.splice(0, 1000);
}

// A message in place of a view (e.g. a payload of another version), text only; null clears it.
export function showProblem(parentElement, message) {
  const old = parentElement.querySelector(".av-problem");
  if (old) old.remove();
  if (message) parentElement.appendChild(hEl("div", { class: "av-problem", role: "alert" }, message));
}
