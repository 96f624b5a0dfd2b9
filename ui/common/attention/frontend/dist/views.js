// dom.js
var SVG_NS = "http://www.w3.org/2000/svg";
var FONT_STACK = 'ui-sans-serif, system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", "Noto Sans", "DejaVu Sans", Arial, sans-serif';
function hEl(tag, attrs, ...children) {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  appendChildren(node, children);
  return node;
}
function sEl(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  setAttrs(node, attrs);
  appendChildren(node, children);
  return node;
}
function setAttrs(node, attrs) {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === void 0 || v === false) continue;
    node.setAttribute(k, v === true ? "" : String(v));
  }
}
function appendChildren(node, children) {
  for (const child of children) {
    if (child === null || child === void 0 || child === false) continue;
    node.appendChild(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
  }
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
  setTimeout(() => URL.revokeObjectURL(url), 4e3);
}
function svgMarkup(svg) {
  const clone = svg.cloneNode(true);
  clone.setAttribute("xmlns", SVG_NS);
  return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(clone);
}
function downloadSvg(svg, filename) {
  downloadBlob(new Blob([svgMarkup(svg)], { type: "image/svg+xml" }), filename);
}
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
      canvas.toBlob(
        (blob) => blob ? resolve(blob) : reject(new Error("PNG export failed")),
        "image/png"
      );
    };
    img.onerror = () => {
      URL.revokeObjectURL(url);
      reject(new Error("SVG could not be rasterised"));
    };
    img.src = url;
  });
}
var measureCtx = null;
function textWidth(text, font) {
  if (!measureCtx) measureCtx = document.createElement("canvas").getContext("2d");
  measureCtx.font = font;
  return measureCtx.measureText(text).width;
}
var mountState = /* @__PURE__ */ new WeakMap();
function viewState(parent, init) {
  let st = mountState.get(parent);
  if (!st) {
    st = init();
    mountState.set(parent, st);
  }
  return st;
}
function toolButton(label, title, onClick, extra) {
  const b = hEl("button", { type: "button", class: "av-btn", title, ...extra || {} }, label);
  b.addEventListener("click", onClick);
  return b;
}
function viewTiming(kind, ms, extra) {
  window.__viewTimings = window.__viewTimings || [];
  window.__viewTimings.push({ kind, ms, ...extra || {} });
  if (window.__viewTimings.length > 2e3) window.__viewTimings.splice(0, 1e3);
}
function showProblem(parentElement, message) {
  const old = parentElement.querySelector(".av-problem");
  if (old) old.remove();
  if (message) parentElement.appendChild(hEl("div", { class: "av-problem", role: "alert" }, message));
}

// constants.js
var SEGMENTS = ["All", "A->A", "B->B", "A->B", "B->A"];
var VIEW_KINDS = ["head", "model", "heatmap"];
var PIN_SIDES = ["from", "to"];
var STATE_KEYS = ["view", "layer", "heads", "pin", "segment"];

// heads.js
var HEAD_COLOURS = [
  "#1f77b4",
  "#ff7f0e",
  "#2ca02c",
  "#d62728",
  "#9467bd",
  "#8c564b",
  "#e377c2",
  "#7f7f7f",
  "#a8a41c",
  "#139fb0",
  "#393b79",
  "#ad494a",
  "#637939",
  "#8c6d31",
  "#843c39",
  "#7b4173",
  "#3182bd",
  "#e6550d",
  "#31a354",
  "#756bb1"
];
function headColour(h) {
  if (h < HEAD_COLOURS.length) return HEAD_COLOURS[h];
  return `hsl(${h * 137.508 % 360}, 60%, 45%)`;
}
var SEG_COLOURS = ["#8fb3de", "#f3b37a"];
var SEGMENT_LABELS = Object.fromEntries(SEGMENTS.map((s) => [s, s.replace("->", "\u2192")]));
function segmentAllows(filter, segQ, segK) {
  switch (filter) {
    case "A->A":
      return segQ === 0 && segK === 0;
    case "B->B":
      return segQ === 1 && segK === 1;
    case "A->B":
      return segQ === 0 && segK === 1;
    case "B->A":
      return segQ === 1 && segK === 0;
    default:
      return true;
  }
}
function sideAllows(filter, side, seg) {
  if (filter === "All") return true;
  const [from, to] = filter.split("->");
  return (side === "from" ? from : to) === (seg === 0 ? "A" : "B");
}
function headsText(visible, H) {
  if (visible.length === H) return `all ${H} heads`;
  if (visible.length === 0) return "no heads";
  if (visible.length === 1) return `head ${visible[0] + 1}`;
  if (visible.length > 6) return `${visible.length} of ${H} heads`;
  return `heads ${visible.map((h) => h + 1).join(", ")}`;
}

// head_view_export.js
function exportHeadView(svg, opts) {
  const { layerNo, segment, visible, pad, width, height, fontSize } = opts;
  const heading = `Layer ${layerNo + 1}` + (segment !== "All" ? ` \xB7 ${SEGMENT_LABELS[segment]}` : "");
  const x0 = pad + Math.ceil(textWidth(heading, `700 ${fontSize}px ${FONT_STACK}`)) + 16;
  const step = 34;
  const perRow = Math.max(1, Math.floor((width - x0 - pad) / step));
  const legendRows = Math.max(1, Math.ceil(visible.length / perRow));
  const band = 16 + 20 * legendRows;
  const w = width, h = height + band;
  const out = sEl("svg", {
    width: w,
    height: h,
    viewBox: `0 0 ${w} ${h}`,
    "font-family": FONT_STACK,
    "font-size": fontSize,
    style: "color:#262730"
  });
  out.appendChild(sEl("rect", { x: 0, y: 0, width: w, height: h, fill: "#ffffff" }));
  out.appendChild(sEl("text", { x: pad, y: 20, "font-weight": 700, fill: "#262730" }, heading));
  visible.forEach((hh, k) => {
    const x = x0 + k % perRow * step, y = 9 + 20 * Math.floor(k / perRow);
    out.appendChild(sEl("rect", { x, y, width: 12, height: 12, rx: 2, fill: headColour(hh) }));
    out.appendChild(sEl(
      "text",
      { x: x + 15, y: y + 10.5, "font-size": 11, fill: "#262730" },
      String(hh + 1)
    ));
  });
  const content = svg.cloneNode(true);
  content.removeAttribute("class");
  content.querySelectorAll(".av-bg").forEach((node) => node.remove());
  content.querySelectorAll(".av-dim").forEach((node) => node.setAttribute("opacity", "0.3"));
  content.querySelectorAll("text[fill='currentColor']").forEach((node) => node.setAttribute("fill", "#262730"));
  content.querySelectorAll(".av-colhead").forEach((node) => {
    node.setAttribute("fill", "#6b7280");
    node.setAttribute("font-size", "11");
  });
  content.setAttribute("x", "0");
  content.setAttribute("y", String(band));
  out.appendChild(content);
  return { svg: out, w, h };
}

// labels.js
function thinLabels(a, b, px, line) {
  const cell = px / (b - a);
  const step = Math.max(1, Math.ceil(line / cell));
  const marks = [];
  for (let i = a; i < b; i += step) marks.push({ index: i, pos: (i - a + 0.5) * cell });
  return { step, marks };
}
function fitLabel(text, max, width) {
  const s = String(text);
  if (width(s) <= max) return s;
  let cut = s;
  while (cut.length > 1 && width(cut + "\u2026") > max) cut = cut.slice(0, -1);
  return cut + "\u2026";
}

// lines.js
var N_BUCKETS = 20;
var MIN_Q_ALL = 3;
var LINE_BUDGET = 8e3;
function minWeightShown(edges, visible, n, seg, segment, budget = LINE_BUDGET) {
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
function bucketOf(q) {
  return Math.min(N_BUCKETS - 1, Math.floor(q * N_BUCKETS / 256));
}
function lineBuckets(edges, h, n, seg, segment, f, minQ, path) {
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
function partnerWeights(edges, h, n, seg, segment, f) {
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
        if (edges.keys[e] === f.index) {
          out.push([i, edges.wts[e]]);
          break;
        }
      }
    }
  }
  return out.filter(([, q]) => q >= 2);
}

// payload_spec.js
var MAKERS_MODULE = "analysis.attention.views";
var PAYLOADS = {
  "views": {
    "version": 2,
    "maker": "views_payload",
    "fields": [
      { "name": "view", "type": "string", "required": true, "choices": ["views"] },
      { "name": "version", "type": "int", "required": true, "choices": [2] },
      { "name": "n_layers", "type": "int", "required": true },
      { "name": "n_heads", "type": "int", "required": true },
      { "name": "n", "type": "int", "required": true },
      { "name": "labels", "type": "list", "required": true, "length": ["n", "tokens"], "items": "string" },
      { "name": "segments", "type": "list", "required": true, "choices": [0, 1], "length": ["n", "tokens"], "items": "int" },
      { "name": "special", "type": "list", "required": true, "choices": [0, 1], "length": ["n", "tokens"], "items": "int" },
      { "name": "is_pair", "type": "bool", "required": true },
      { "name": "scale", "type": "int", "required": true, "choices": [255] },
      { "name": "size", "type": "int", "required": true },
      { "name": "pool", "type": "string", "required": true, "choices": ["max", "none"] },
      { "name": "thumbs", "type": "base64", "required": true, "unless": "heatmap" },
      { "name": "encoding", "type": "string", "required": true, "choices": ["dense", "sparse"] },
      { "name": "top_k", "type": "int", "required": true, "nullable": true },
      { "name": "layers", "type": "list", "required": true, "unless": "heatmap", "length": ["n_layers", "layers"], "items": [{ "name": "weights", "type": "base64", "required": true }, { "name": "counts", "type": "base64", "required": false, "when": ["encoding", "sparse"] }, { "name": "keys", "type": "base64", "required": false, "when": ["encoding", "sparse"] }, { "name": "n_edges", "type": "int", "required": false, "when": ["encoding", "sparse"] }] },
      { "name": "digest", "type": "string", "required": true },
      { "name": "heatmap", "type": "object", "required": false, "items": [{ "name": "layer", "type": "int", "required": true }, { "name": "head", "type": "int", "required": true }, { "name": "n", "type": "int", "required": true }, { "name": "max", "type": "number", "required": true }, { "name": "weights", "type": "base64", "required": true }] }
    ]
  },
  "head": {
    "version": 1,
    "maker": "head_view_payload",
    "fields": [
      { "name": "view", "type": "string", "required": true, "choices": ["head"] },
      { "name": "version", "type": "int", "required": true, "choices": [1] },
      { "name": "layer", "type": "int", "required": true },
      { "name": "n_heads", "type": "int", "required": true },
      { "name": "n", "type": "int", "required": true },
      { "name": "labels", "type": "list", "required": true, "length": ["n", "tokens"], "items": "string" },
      { "name": "segments", "type": "list", "required": true, "choices": [0, 1], "length": ["n", "tokens"], "items": "int" },
      { "name": "special", "type": "list", "required": true, "choices": [0, 1], "length": ["n", "tokens"], "items": "int" },
      { "name": "is_pair", "type": "bool", "required": true },
      { "name": "top_k", "type": "int", "required": true, "nullable": true },
      { "name": "threshold", "type": "number", "required": true },
      { "name": "scale", "type": "int", "required": true, "choices": [255] },
      { "name": "highlight", "type": "list", "required": true, "items": "int" },
      { "name": "encoding", "type": "string", "required": true, "choices": ["dense", "sparse"] },
      { "name": "weights", "type": "base64", "required": true },
      { "name": "counts", "type": "base64", "required": false, "when": ["encoding", "sparse"] },
      { "name": "keys", "type": "base64", "required": false, "when": ["encoding", "sparse"] },
      { "name": "n_edges", "type": "int", "required": true }
    ]
  },
  "model": {
    "version": 1,
    "maker": "model_view_payload",
    "fields": [
      { "name": "view", "type": "string", "required": true, "choices": ["model"] },
      { "name": "version", "type": "int", "required": true, "choices": [1] },
      { "name": "n_layers", "type": "int", "required": true },
      { "name": "n_heads", "type": "int", "required": true },
      { "name": "n", "type": "int", "required": true },
      { "name": "size", "type": "int", "required": true },
      { "name": "pool", "type": "string", "required": true, "choices": ["max", "none"] },
      { "name": "thumbs", "type": "base64", "required": true },
      { "name": "scale", "type": "int", "required": true, "choices": [255] }
    ]
  }
};

// payload.js
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
function typeOk(v, type) {
  switch (type) {
    case "int":
      return Number.isInteger(v);
    case "number":
      return typeof v === "number" && Number.isFinite(v);
    case "bool":
      return typeof v === "boolean";
    case "string":
      return typeof v === "string";
    case "base64":
      return typeof v === "string" && v.length % 4 === 0;
    case "list":
      return Array.isArray(v);
    default:
      return !!v && typeof v === "object" && !Array.isArray(v);
  }
}
function needed(f, root) {
  if (f.required) return !f.unless || root[f.unless] === void 0 || root[f.unless] === null;
  return !!f.when && root[f.when[0]] === f.when[1];
}
var absent = (obj, f) => obj[f.name] === void 0 || obj[f.name] === null && !f.nullable;
var json = (v) => JSON.stringify(v ?? null);
function fieldsProblem(obj, fields, root, where, path) {
  const missing = fields.filter((f) => needed(f, root) && absent(obj, f)).map((f) => path + f.name);
  if (missing.length) return `The payload of ${where} lacks ${missing.join(", ")}.`;
  for (const f of fields) {
    const value = obj[f.name];
    if (value === void 0 || value === null) continue;
    const name = path + f.name;
    if (!typeOk(value, f.type)) return `The payload of ${where} has ${name} of another type than ${f.type}.`;
    const values = f.type === "list" ? value : [value];
    if (f.choices) {
      const bad = values.find((v) => !f.choices.includes(v));
      if (bad !== void 0) {
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
function checkPayload(data, kind) {
  if (!data || typeof data !== "object") return "The view received no data.";
  const spec = PAYLOADS[kind];
  const maker = `${MAKERS_MODULE}.${spec.maker}`;
  if (data.view !== kind) return `This view needs a payload from ${maker} (got view ${json(data.view)}).`;
  if (data.version !== spec.version) {
    return `This view draws payload version ${spec.version} of ${maker}, got ${json(data.version)}: reload the page.`;
  }
  return fieldsProblem(data, spec.fields, data, maker, "");
}
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
        if (q > 0) {
          keys[e] = j;
          wts[e] = q;
          e++;
        }
      }
      rowStart[r + 1] = e;
    }
  }
  return { rowStart, keys, wts };
}
function validPin(p, labels) {
  const ok = p && PIN_SIDES.includes(p.side) && Number.isInteger(p.index) && p.index >= 0 && p.index < labels.length;
  return ok ? { side: p.side, index: p.index, token: String(labels[p.index]) } : null;
}
function headSet(heads, H) {
  const wanted = Array.isArray(heads) ? heads.filter((h) => Number.isInteger(h) && h >= 0 && h < H) : [];
  return new Set(wanted.length ? wanted : [...Array(H).keys()]);
}
function headList(visible) {
  return Array.from(visible).sort((a, b) => a - b);
}

// head_view.js
function mountHeadView(root, data, layerEdges, st, hooks) {
  let edges = layerEdges;
  const H = data.n_heads, n = data.n;
  const labels = data.labels, seg = data.segments, special = data.special;
  const isPair = !!data.is_pair;
  let layerNo = data.layer;
  let hover = null;
  const marked = new Set(Array.isArray(data.highlight) ? data.highlight : []);
  const fontSize = n <= 60 ? 13 : n <= 150 ? 12 : 11;
  const rowH = n <= 60 ? 22 : n <= 150 ? 18 : 15;
  const font = `${fontSize}px ${FONT_STACK}`;
  const MAX_LABEL = 170;
  const shown = labels.map((label) => fitLabel(label, MAX_LABEL, (t) => textWidth(t, font)));
  const boldFont = `700 ${font}`;
  const shownW = shown.map((t, i) => textWidth(t, marked.has(i) ? boldFont : font));
  const headFont = `600 11px ${FONT_STACK}`;
  const labelW = Math.ceil(Math.max(
    textWidth("QUERY (FROM)", headFont) * 1.08,
    ...shownW
  )) + 18;
  const host = root.getRootNode().host || root.parentNode || root;
  const avail = Math.max(360, (host.clientWidth || 720) - 8);
  const gap = Math.max(140, Math.min(300, avail - 2 * labelW - 24));
  const numW = 40;
  const pad = 10 + numW;
  const width = pad * 2 + labelW * 2 + gap;
  const top = 30;
  const height = top + n * rowH + 8;
  const xL = pad + labelW, xR = xL + gap;
  const yOf = (i) => top + i * rowH + rowH / 2;
  const oldBody = root.querySelector(".av-body");
  const scroll = oldBody ? [oldBody.scrollTop, oldBody.scrollLeft] : null;
  root.replaceChildren();
  const title = hEl("div", { class: "av-title" });
  const legend = hEl("div", { class: "av-legend", role: "group", "aria-label": "Heads" });
  const swatches = [];
  for (let h = 0; h < H; h++) {
    const sw = hEl("button", {
      type: "button",
      class: "av-swatch",
      "data-head": h + 1,
      title: `Head ${h + 1}: click to show or hide, double-click to show only this head`
    }, String(h + 1));
    sw.style.setProperty("--c", headColour(h));
    sw.addEventListener("click", () => {
      if (st.visible.has(h)) st.visible.delete(h);
      else st.visible.add(h);
      update();
    });
    sw.addEventListener("dblclick", (e) => {
      e.preventDefault();
      const only = st.visible.size === 1 && st.visible.has(h);
      st.visible = only ? /* @__PURE__ */ new Set([...Array(H).keys()]) : /* @__PURE__ */ new Set([h]);
      update();
    });
    swatches.push(sw);
    legend.appendChild(sw);
  }
  const allBtn = toolButton("All", "Show every head", () => {
    st.visible = /* @__PURE__ */ new Set([...Array(H).keys()]);
    update();
  });
  const noneBtn = toolButton("None", "Hide every head", () => {
    st.visible = /* @__PURE__ */ new Set();
    update();
  });
  const segBox = hEl("div", { class: "av-seg", role: "group", "aria-label": "Segment filter" });
  const segButtons = {};
  if (isPair) {
    for (const s of SEGMENTS) {
      const b = toolButton(
        SEGMENT_LABELS[s],
        s === "All" ? "Lines between all tokens" : `Only lines from segment ${s[0]} to segment ${s[3]}`,
        () => {
          st.segment = s;
          update();
        },
        { "data-segment": s }
      );
      segButtons[s] = b;
      segBox.appendChild(b);
    }
  }
  const svgBtn = toolButton("SVG", "Download this view as SVG", () => {
    const { svg: out } = exportSvg();
    downloadSvg(out, `head_view_layer${layerNo + 1}.svg`);
  });
  const pngBtn = toolButton("PNG", "Download this view as PNG", async () => {
    const { svg: out, w, h } = exportSvg();
    downloadBlob(await svgToPng(out, w, h, 2), `head_view_layer${layerNo + 1}.png`);
  });
  const layerButtons = [];
  let layerBox = null;
  if (hooks.layers) {
    layerBox = hEl("div", { class: "av-seg av-layers", role: "group", "aria-label": "Layer" });
    for (let l = 0; l < hooks.layers.count; l++) {
      const b = toolButton(
        String(l + 1),
        `Show layer ${l + 1}`,
        () => hooks.layers.pick(l),
        { "data-layer": l + 1 }
      );
      b.classList.toggle("av-active", l === layerNo);
      layerButtons.push(b);
      layerBox.appendChild(b);
    }
  }
  const toolbar = hEl(
    "div",
    { class: "av-toolbar" },
    title,
    layerBox ? hEl(
      "div",
      { class: "av-controls" },
      hEl("span", { class: "av-label" }, "Layer"),
      layerBox
    ) : null,
    hEl(
      "div",
      { class: "av-controls" },
      hEl("span", { class: "av-label" }, "Heads"),
      legend,
      allBtn,
      noneBtn
    ),
    isPair ? hEl(
      "div",
      { class: "av-controls" },
      hEl("span", { class: "av-label" }, "Segments"),
      segBox
    ) : null,
    hEl("div", { class: "av-controls av-right" }, svgBtn, pngBtn)
  );
  let note = "Hover a token to show only its lines (with one head shown, also their weights); click it to pin. Click a head colour to hide it, double-click to show it alone.";
  if (data.encoding === "sparse" || data.top_k || data.threshold > 0) {
    const parts = [];
    if (data.top_k) parts.push(`the ${data.top_k} strongest keys of every query per head`);
    if (data.threshold > 0) parts.push(`weights \u2265 ${data.threshold}`);
    note = `Showing ${parts.join(" and ")}. ` + note;
  }
  const faint = hEl("span", { class: "av-faint" });
  const hint = hEl("div", { class: "av-hint" }, note, faint);
  const svg = sEl("svg", {
    class: "av-svg",
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    "font-family": FONT_STACK,
    "font-size": fontSize,
    role: "img",
    "aria-label": `Attention head view, layer ${layerNo + 1}`
  });
  const bg = sEl("rect", { x: 0, y: 0, width, height, fill: "transparent", class: "av-bg" });
  bg.addEventListener("click", () => {
    if (st.pinned) {
      st.pinned = null;
      update();
    }
  });
  svg.appendChild(bg);
  svg.appendChild(sEl("text", {
    x: xL - 10,
    y: 16,
    "text-anchor": "end",
    class: "av-colhead",
    fill: "currentColor"
  }, "Query (from)"));
  svg.appendChild(sEl("text", {
    x: xR + 10,
    y: 16,
    "text-anchor": "start",
    class: "av-colhead",
    fill: "currentColor"
  }, "Key (to)"));
  const linesG = sEl("g", { class: "av-lines", fill: "none", "stroke-linecap": "round" });
  svg.appendChild(linesG);
  const weightsG = sEl("g", {
    class: "av-weights",
    "font-size": Math.max(10, fontSize - 2),
    "dominant-baseline": "central"
  });
  svg.appendChild(weightsG);
  const tokNodes = { from: [], to: [] };
  for (const side of ["from", "to"]) {
    const g = sEl("g", { class: `av-col av-col-${side}` });
    for (let i = 0; i < n; i++) {
      const y = yOf(i);
      const x0 = side === "from" ? pad : xR;
      const hit = sEl("rect", {
        x: x0,
        y: y - rowH / 2,
        width: labelW,
        height: rowH,
        rx: 3,
        class: "av-tokbg",
        fill: "transparent"
      });
      const textAttrs = side === "from" ? { x: xL - 10, y, "text-anchor": "end" } : { x: xR + 10, y, "text-anchor": "start" };
      const text = sEl("text", {
        ...textAttrs,
        "dominant-baseline": "central",
        class: special[i] ? "av-tok-text av-special" : "av-tok-text",
        fill: special[i] ? "#8a8f98" : "currentColor"
      }, shown[i]);
      const tg = sEl("g", {
        class: marked.has(i) ? "av-tok av-marked" : "av-tok",
        "data-side": side,
        "data-index": i,
        "data-token": labels[i]
      }, hit);
      if (isPair) {
        const bx = side === "from" ? pad + 1 : xR + labelW - 4;
        tg.appendChild(sEl("rect", {
          x: bx,
          y: y - rowH / 2 + 3,
          width: 3,
          height: rowH - 6,
          rx: 1.5,
          fill: SEG_COLOURS[seg[i] ? 1 : 0],
          class: "av-segbar"
        }));
      }
      tg.appendChild(text);
      if (shown[i] !== String(labels[i])) tg.appendChild(sEl("title", null, String(labels[i])));
      tg.addEventListener("mouseenter", () => {
        hover = { side, index: i };
        draw();
      });
      tg.addEventListener("mouseleave", () => {
        hover = null;
        draw();
      });
      tg.addEventListener("click", (e) => {
        e.stopPropagation();
        const same = st.pinned && st.pinned.side === side && st.pinned.index === i;
        st.pinned = same ? null : { side, index: i, token: String(labels[i]) };
        update();
      });
      tokNodes[side].push({ g: tg, text, hit });
      g.appendChild(tg);
    }
    svg.appendChild(g);
  }
  const body = hEl("div", { class: "av-body" }, svg);
  const segLegend = isPair ? hEl(
    "div",
    { class: "av-seglegend" },
    hEl("span", { class: "av-segkey", style: `--c:${SEG_COLOURS[0]}` }),
    "Segment A",
    hEl("span", { class: "av-segkey", style: `--c:${SEG_COLOURS[1]}` }),
    "Segment B"
  ) : null;
  root.append(toolbar, hint, body);
  if (scroll) [body.scrollTop, body.scrollLeft] = scroll;
  if (segLegend) root.appendChild(segLegend);
  root.setAttribute("data-layer", String(layerNo + 1));
  root.setAttribute("data-n", String(n));
  function focus() {
    return st.pinned || hover;
  }
  function draw() {
    const f = focus();
    const visible = headList(st.visible);
    const paths = [];
    const minQ = f ? 1 : minWeightShown(edges, visible, n, seg, st.segment);
    root.setAttribute("data-min-weight", String(minQ));
    faint.textContent = minQ > MIN_Q_ALL ? ` Lines under ${(minQ / 255).toFixed(3)} are hidden (at most ${LINE_BUDGET} lines); hover or pin a token to see all of its lines.` : "";
    const strokeW = f ? 2.2 : n > 150 ? 1.2 : 1.8;
    const path = (i, j) => `M${xL} ${yOf(i)}L${xR} ${yOf(j)}`;
    for (const h of visible) {
      const buckets = lineBuckets(edges, h, n, seg, st.segment, f, minQ, path);
      for (let b = 0; b < N_BUCKETS; b++) {
        if (!buckets[b].length) continue;
        paths.push(sEl("path", {
          d: buckets[b].join(""),
          stroke: headColour(h),
          "stroke-opacity": ((b + 0.5) / N_BUCKETS).toFixed(3),
          "stroke-width": strokeW,
          "data-head": h + 1
        }));
      }
    }
    linesG.replaceChildren(...paths);
    const nums = [];
    if (f && visible.length === 1) {
      const h = visible[0];
      const other = f.side === "from" ? "to" : "from";
      const anchor = other === "to" ? "start" : "end";
      for (const [k, q] of partnerWeights(edges, h, n, seg, st.segment, f)) {
        const x = other === "to" ? xR + 16 + shownW[k] : xL - 16 - shownW[k];
        nums.push(sEl("text", {
          x,
          y: yOf(k),
          "text-anchor": anchor,
          fill: "currentColor",
          "fill-opacity": 0.7,
          "font-weight": 600,
          "data-index": k
        }, (q / 255).toFixed(2)));
      }
    }
    weightsG.replaceChildren(...nums);
    for (const side of ["from", "to"]) {
      tokNodes[side].forEach((t, i) => {
        const active = sideAllows(st.segment, side, seg[i]);
        const focused = !!(f && f.side === side && f.index === i);
        const pinned = !!(st.pinned && st.pinned.side === side && st.pinned.index === i);
        const key = (active ? 1 : 0) | (focused ? 2 : 0) | (pinned ? 4 : 0);
        if (t.key === key) return;
        t.key = key;
        t.g.classList.toggle("av-dim", !active);
        t.g.classList.toggle("av-focus", focused);
        t.g.classList.toggle("av-pinned", pinned);
        t.hit.setAttribute("fill", focused ? "rgba(59,111,216,0.14)" : "transparent");
        t.text.setAttribute("font-weight", focused ? "700" : "400");
      });
    }
  }
  function update(initial) {
    const visible = headList(st.visible);
    swatches.forEach((sw, h) => {
      const on = st.visible.has(h);
      sw.classList.toggle("av-off", !on);
      sw.setAttribute("aria-pressed", on ? "true" : "false");
    });
    for (const [s, b] of Object.entries(segButtons)) {
      b.classList.toggle("av-active", s === st.segment);
      b.setAttribute("aria-pressed", s === st.segment ? "true" : "false");
    }
    title.replaceChildren(
      hEl("span", { class: "av-title-main" }, `Layer ${layerNo + 1}`),
      hEl(
        "span",
        { class: "av-title-sub" },
        ` \xB7 ${headsText(visible, H)} \xB7 ${n} ${n === 1 ? "token" : "tokens"}` + (st.segment !== "All" ? ` \xB7 ${SEGMENT_LABELS[st.segment]}` : "") + (st.pinned ? ` \xB7 pinned: ${st.pinned.side === "from" ? "from" : "to"} \u201C${st.pinned.token}\u201D` : "")
      )
    );
    root.setAttribute("data-heads", visible.map((h) => h + 1).join(","));
    root.setAttribute("data-segment", st.segment);
    draw();
    hooks.changed(!!initial);
  }
  function exportSvg() {
    return exportHeadView(svg, {
      layerNo,
      segment: st.segment,
      visible: headList(st.visible),
      pad,
      width,
      height,
      fontSize
    });
  }
  const onKey = (e) => {
    if (e.key === "Escape" && st.pinned) {
      st.pinned = null;
      update();
    }
  };
  document.addEventListener("keydown", onKey);
  return {
    update,
    // fromPage: the page asked for this layer (nothing to report back)
    setLayer(l, layerEdges2, fromPage) {
      layerNo = l;
      edges = layerEdges2;
      root.setAttribute("data-layer", String(l + 1));
      svg.setAttribute("aria-label", `Attention head view, layer ${l + 1}`);
      for (const b of layerButtons) b.classList.toggle("av-active", Number(b.dataset.layer) === l + 1);
      update(!!fromPage);
    },
    cleanup() {
      document.removeEventListener("keydown", onKey);
    }
  };
}

// heatmap.js
var VEGA_BLUES = "cfe1f2bed8eca8cee58fc1de74b2d75ba3cf4592c63181bd206fb2125ca40a4a90";
function basisLut(hex) {
  const stops = [];
  for (let k = 0; k < hex.length; k += 6) {
    const v = parseInt(hex.slice(k, k + 6), 16);
    stops.push([v >> 16 & 255, v >> 8 & 255, v & 255]);
  }
  const m = stops.length - 1;
  const basis = (t1, v0, v1, v2, v3) => {
    const t2 = t1 * t1, t3 = t2 * t1;
    return ((1 - 3 * t1 + 3 * t2 - t3) * v0 + (4 - 6 * t2 + 3 * t3) * v1 + (1 + 3 * t1 + 3 * t2 - 3 * t3) * v2 + t3 * v3) / 6;
  };
  const lut = new Uint8ClampedArray(256 * 3);
  for (let q = 0; q < 256; q++) {
    let t = q / 255;
    const i = t >= 1 ? (t = 1, m - 1) : Math.floor(t * m);
    for (let c = 0; c < 3; c++) {
      const v1 = stops[i][c], v2 = stops[i + 1][c];
      const v0 = i > 0 ? stops[i - 1][c] : 2 * v1 - v2;
      const v3 = i < m - 1 ? stops[i + 2][c] : 2 * v2 - v1;
      lut[3 * q + c] = Math.round(basis((t - i / m) * m, v0, v1, v2, v3));
    }
  }
  return lut;
}
var HM_LUT = basisLut(VEGA_BLUES);
function mountHeatmap(root, labels, hm, t0) {
  const n = hm.n, top = hm.max;
  const q = b64Bytes(hm.weights);
  const weightOf = (i, j) => q[i * n + j] * top / 255;
  const zoom = { r0: 0, r1: n, c0: 0, c1: n };
  const host = root.getRootNode().host || root.parentNode || root;
  const avail = Math.max(300, (host.clientWidth || 720) - 4);
  const LABEL_W = Math.min(110, Math.floor(avail * 0.22)), LINE = 13;
  const P = Math.max(200, Math.min(760, avail - LABEL_W - 16));
  const dpr = Math.max(1, Math.min(2, window.devicePixelRatio || 1));
  root.replaceChildren();
  const title = hEl("div", { class: "av-title" });
  const reset = toolButton("Reset zoom", "Show the whole map", () => setZoom(0, n, 0, n));
  const png = toolButton("PNG", "Download what is shown as PNG", () => {
    plot.toBlob(
      (b) => b && downloadBlob(b, `heatmap_L${hm.layer + 1}_H${hm.head + 1}_view.png`),
      "image/png"
    );
  });
  const legend = hEl(
    "div",
    { class: "av-hm-legend" },
    "0",
    hEl("span", { class: "av-hm-ramp" }),
    top.toFixed(3)
  );
  const toolbar = hEl(
    "div",
    { class: "av-toolbar" },
    title,
    hEl("div", { class: "av-controls" }, hEl("span", { class: "av-label" }, "Weight"), legend),
    hEl("div", { class: "av-controls av-right" }, reset, png)
  );
  const hint = hEl(
    "div",
    { class: "av-hint" },
    "Rows are queries (from), columns keys (to); colour from 0 to the map's largest weight. Drag over the map to zoom into a region; hover a cell for its tokens and weight; double-click or Reset zoom to see the whole map. Labels are thinned to what fits."
  );
  const plot = hEl("canvas", {
    class: "av-hm-plot",
    width: Math.round(P * dpr),
    height: Math.round(P * dpr),
    style: `width:${P}px;height:${P}px`,
    role: "img",
    "aria-label": `Attention map, layer ${hm.layer + 1}, head ${hm.head + 1}`
  });
  const over = hEl("canvas", {
    class: "av-hm-over",
    width: Math.round(P * dpr),
    height: Math.round(P * dpr),
    style: `width:${P}px;height:${P}px`
  });
  const ylab = hEl("div", { class: "av-hm-ylabels", style: `width:${LABEL_W}px;height:${P}px` });
  const xlab = hEl("div", { class: "av-hm-xlabels", style: `width:${P}px;height:${LABEL_W}px` });
  const tip = hEl("div", { class: "av-hm-tip", role: "tooltip" });
  tip.style.display = "none";
  const stage = hEl(
    "div",
    { class: "av-hm-stage", style: `width:${P}px;height:${P}px` },
    plot,
    over,
    tip
  );
  const grid = hEl(
    "div",
    {
      class: "av-hm-grid",
      style: `grid-template-columns:${LABEL_W}px ${P}px`
    },
    ylab,
    stage,
    hEl("div", null),
    xlab
  );
  root.append(toolbar, hint, hEl("div", { class: "av-hm-wrap" }, grid));
  root.setAttribute("data-n", String(n));
  root.setAttribute("data-layer", String(hm.layer + 1));
  root.setAttribute("data-head", String(hm.head + 1));
  const img = document.createElement("canvas");
  function draw() {
    const rows = zoom.r1 - zoom.r0, cols = zoom.c1 - zoom.c0;
    img.width = cols;
    img.height = rows;
    const ictx = img.getContext("2d");
    const data = ictx.createImageData(cols, rows);
    const px = data.data;
    let k = 0;
    for (let i = zoom.r0; i < zoom.r1; i++) {
      const base = i * n;
      for (let j = zoom.c0; j < zoom.c1; j++) {
        const v = q[base + j];
        px[k] = HM_LUT[3 * v];
        px[k + 1] = HM_LUT[3 * v + 1];
        px[k + 2] = HM_LUT[3 * v + 2];
        px[k + 3] = 255;
        k += 4;
      }
    }
    ictx.putImageData(data, 0, 0);
    const ctx = plot.getContext("2d");
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(img, 0, 0, plot.width, plot.height);
    labelsFor(ylab, zoom.r0, zoom.r1, "y");
    labelsFor(xlab, zoom.c0, zoom.c1, "x");
    const zoomed = rows !== n || cols !== n;
    title.replaceChildren(
      hEl("span", { class: "av-title-main" }, `Layer ${hm.layer + 1}, head ${hm.head + 1}`),
      hEl("span", { class: "av-title-sub" }, ` \xB7 ${n} tokens` + (zoomed ? ` \xB7 rows ${zoom.r0 + 1}\u2013${zoom.r1}, columns ${zoom.c0 + 1}\u2013${zoom.c1}` : ""))
    );
    reset.disabled = !zoomed;
    root.setAttribute("data-zoom", `${zoom.r0},${zoom.r1},${zoom.c0},${zoom.c1}`);
  }
  function labelsFor(box, a, b, axis) {
    const { step, marks } = thinLabels(a, b, P, LINE);
    const nodes = marks.map(({ index, pos }) => {
      const node = hEl(
        "span",
        { class: `av-hm-lab av-hm-${axis}lab`, "data-index": index },
        String(labels[index])
      );
      node.style[axis === "y" ? "top" : "left"] = `${pos - LINE / 2}px`;
      return node;
    });
    box.replaceChildren(...nodes);
    box.setAttribute("data-step", String(step));
  }
  function cellAt(e) {
    const r = over.getBoundingClientRect();
    const x = e.clientX - r.left, y = e.clientY - r.top;
    if (x < 0 || y < 0 || x >= r.width || y >= r.height) return null;
    const rows = zoom.r1 - zoom.r0, cols = zoom.c1 - zoom.c0;
    return {
      i: zoom.r0 + Math.min(rows - 1, Math.floor(y / r.height * rows)),
      j: zoom.c0 + Math.min(cols - 1, Math.floor(x / r.width * cols)),
      x,
      y
    };
  }
  const octx = over.getContext("2d");
  let brush = null;
  function overlay(c) {
    octx.clearRect(0, 0, over.width, over.height);
    const rows = zoom.r1 - zoom.r0, cols = zoom.c1 - zoom.c0;
    const ch = over.height / rows, cw = over.width / cols;
    if (c) {
      octx.fillStyle = "rgba(255, 190, 60, 0.28)";
      octx.fillRect(0, (c.i - zoom.r0) * ch, over.width, Math.max(ch, 1));
      octx.fillRect((c.j - zoom.c0) * cw, 0, Math.max(cw, 1), over.height);
      octx.strokeStyle = "#d9480f";
      octx.lineWidth = Math.max(1, dpr);
      octx.strokeRect((c.j - zoom.c0) * cw, (c.i - zoom.r0) * ch, Math.max(cw, 2), Math.max(ch, 2));
    }
    if (brush && brush.end) {
      const [a, b] = [brush.start, brush.end];
      octx.strokeStyle = "#1c7ed6";
      octx.lineWidth = dpr;
      octx.fillStyle = "rgba(28, 126, 214, 0.12)";
      const x = Math.min(a.x, b.x) * dpr, y = Math.min(a.y, b.y) * dpr;
      const w = Math.abs(a.x - b.x) * dpr, h = Math.abs(a.y - b.y) * dpr;
      octx.fillRect(x, y, w, h);
      octx.strokeRect(x, y, w, h);
    }
  }
  function showTip(c) {
    if (!c) {
      tip.style.display = "none";
      return;
    }
    tip.replaceChildren(
      hEl("div", null, hEl("b", null, "from "), `${c.i + 1}: `, String(labels[c.i])),
      hEl("div", null, hEl("b", null, "to "), `${c.j + 1}: `, String(labels[c.j])),
      hEl("div", null, hEl("b", null, "weight "), weightOf(c.i, c.j).toFixed(3))
    );
    tip.style.display = "block";
    const left = c.x + 14 + 220 > P ? Math.max(0, c.x - 230) : c.x + 14;
    tip.style.left = `${left}px`;
    tip.style.top = `${Math.min(P - 60, c.y + 12)}px`;
  }
  over.addEventListener("mousemove", (e) => {
    const t = performance.now();
    const c = cellAt(e);
    if (brush) brush.end = c ? { x: c.x, y: c.y, i: c.i, j: c.j } : brush.end;
    overlay(c);
    showTip(brush ? null : c);
    root.setAttribute("data-hover", c ? `${c.i},${c.j}` : "");
    viewTiming("heatmap-hover", performance.now() - t, { n });
  });
  over.addEventListener("mouseleave", () => {
    overlay(null);
    showTip(null);
  });
  over.addEventListener("mousedown", (e) => {
    const c = cellAt(e);
    if (c) brush = { start: { x: c.x, y: c.y, i: c.i, j: c.j }, end: null };
  });
  window.addEventListener("mouseup", () => {
    if (!brush) return;
    const b = brush;
    brush = null;
    if (!b.end) return;
    const r0 = Math.min(b.start.i, b.end.i), r1 = Math.max(b.start.i, b.end.i) + 1;
    const c0 = Math.min(b.start.j, b.end.j), c1 = Math.max(b.start.j, b.end.j) + 1;
    if (r1 - r0 >= 2 && c1 - c0 >= 2) setZoom(r0, r1, c0, c1);
    else overlay(null);
  });
  over.addEventListener("dblclick", () => setZoom(0, n, 0, n));
  function setZoom(r0, r1, c0, c1) {
    Object.assign(zoom, { r0, r1, c0, c1 });
    overlay(null);
    draw();
  }
  draw();
  viewTiming("heatmap-draw", performance.now() - t0, { n });
  return { zoom: setZoom };
}

// model_view.js
var BLUES = [
  "#f7fbff",
  "#deebf7",
  "#c6dbef",
  "#9ecae1",
  "#6baed6",
  "#4292c6",
  "#2171b5",
  "#08519c",
  "#08306b"
];
function hexRgb(hex) {
  const v = parseInt(hex.slice(1), 16);
  return [v >> 16 & 255, v >> 8 & 255, v & 255];
}
var LUT = (() => {
  const stops = BLUES.map(hexRgb);
  const lut = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i++) {
    const t = i / 255 * (stops.length - 1);
    const k = Math.min(stops.length - 2, Math.floor(t));
    const f = t - k;
    for (let c = 0; c < 3; c++) lut[i * 3 + c] = stops[k][c] + (stops[k + 1][c] - stops[k][c]) * f;
  }
  return lut;
})();
function thumbCanvas(q, offset, s) {
  let max = 0;
  for (let k = 0; k < s * s; k++) if (q[offset + k] > max) max = q[offset + k];
  const c = document.createElement("canvas");
  c.width = s;
  c.height = s;
  const ctx = c.getContext("2d");
  const img = ctx.createImageData(s, s);
  for (let k = 0; k < s * s; k++) {
    const v = max > 0 ? Math.round(q[offset + k] * 255 / max) : 0;
    img.data[4 * k] = LUT[3 * v];
    img.data[4 * k + 1] = LUT[3 * v + 1];
    img.data[4 * k + 2] = LUT[3 * v + 2];
    img.data[4 * k + 3] = 255;
  }
  ctx.putImageData(img, 0, 0);
  return c;
}
function scaledCanvas(src, size, dpr) {
  const c = document.createElement("canvas");
  c.width = Math.round(size * dpr);
  c.height = Math.round(size * dpr);
  c.style.width = `${size}px`;
  c.style.height = `${size}px`;
  const ctx = c.getContext("2d");
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(src, 0, 0, c.width, c.height);
  return c;
}
function mountModelView(root, data, st, onPick) {
  const L = data.n_layers, H = data.n_heads, s = data.size;
  const q = b64Bytes(data.thumbs);
  const host = root.getRootNode().host || root.parentNode || root;
  const avail = Math.max(320, (host.clientWidth || 720) - 80);
  const cell = Math.max(34, Math.min(84, Math.floor(avail / H) - 6));
  const dpr = Math.max(1, Math.min(3, window.devicePixelRatio || 1));
  root.replaceChildren();
  const thumbs = [];
  for (let l = 0; l < L; l++) {
    thumbs.push([]);
    for (let h = 0; h < H; h++) thumbs[l].push(thumbCanvas(q, (l * H + h) * s * s, s));
  }
  const grid = hEl("div", {
    class: "av-grid",
    role: "grid",
    style: `grid-template-columns: auto repeat(${H}, ${cell + 2}px);`
  });
  grid.appendChild(hEl("div", { class: "av-axis-title av-rowlabel" }, "Layer \u2193 / Head \u2192"));
  for (let h = 0; h < H; h++) grid.appendChild(hEl("div", { class: "av-axis" }, String(h + 1)));
  const cells = [];
  for (let l = 0; l < L; l++) {
    grid.appendChild(hEl("div", { class: "av-axis av-rowlabel" }, String(l + 1)));
    cells.push([]);
    for (let h = 0; h < H; h++) {
      const btn = hEl("button", {
        type: "button",
        class: "av-cell",
        "data-layer": l + 1,
        "data-head": h + 1,
        title: `Layer ${l + 1}, head ${h + 1}: click to open`,
        "aria-label": `Layer ${l + 1}, head ${h + 1}`
      }, scaledCanvas(thumbs[l][h], cell, dpr));
      btn.addEventListener("click", () => {
        st.selected = [l, h];
        mark();
        onPick(l, h);
      });
      cells[l].push(btn);
      grid.appendChild(btn);
    }
  }
  function mark() {
    for (let l = 0; l < L; l++) {
      for (let h = 0; h < H; h++) {
        const on = !!st.selected && st.selected[0] === l && st.selected[1] === h;
        cells[l][h].classList.toggle("av-selected", on);
        cells[l][h].setAttribute("aria-selected", on ? "true" : "false");
      }
    }
    root.setAttribute("data-selected", st.selected ? `${st.selected[0] + 1},${st.selected[1] + 1}` : "");
  }
  const EX = { cell: 64, gap: 6, left: 56, top: 56 };
  function exportSize() {
    return {
      w: EX.left + H * (EX.cell + EX.gap) + 10,
      h: EX.top + L * (EX.cell + EX.gap) + 10
    };
  }
  function exportSvg() {
    const { w, h } = exportSize();
    const svg = sEl("svg", {
      width: w,
      height: h,
      viewBox: `0 0 ${w} ${h}`,
      "font-family": FONT_STACK,
      "font-size": 11
    });
    svg.appendChild(sEl("rect", { x: 0, y: 0, width: w, height: h, fill: "#ffffff" }));
    svg.appendChild(sEl(
      "text",
      { x: EX.left, y: 18, "font-size": 13, "font-weight": 700, fill: "#262730" },
      `Model view: ${L} layers \xD7 ${H} heads`
    ));
    svg.appendChild(sEl("text", {
      x: EX.left + H * (EX.cell + EX.gap) / 2,
      y: 34,
      "text-anchor": "middle",
      fill: "#6b7280"
    }, "Head"));
    for (let hh = 0; hh < H; hh++) {
      svg.appendChild(sEl("text", {
        x: EX.left + hh * (EX.cell + EX.gap) + EX.cell / 2,
        y: EX.top - 6,
        "text-anchor": "middle",
        fill: "#6b7280"
      }, String(hh + 1)));
    }
    svg.appendChild(sEl("text", {
      x: 12,
      y: EX.top + L * (EX.cell + EX.gap) / 2,
      "text-anchor": "middle",
      fill: "#6b7280",
      transform: `rotate(-90 12 ${EX.top + L * (EX.cell + EX.gap) / 2})`
    }, "Layer"));
    for (let l = 0; l < L; l++) {
      const y = EX.top + l * (EX.cell + EX.gap);
      svg.appendChild(sEl("text", {
        x: EX.left - 8,
        y: y + EX.cell / 2 + 4,
        "text-anchor": "end",
        fill: "#6b7280"
      }, String(l + 1)));
      for (let hh = 0; hh < H; hh++) {
        const x = EX.left + hh * (EX.cell + EX.gap);
        const href = scaledCanvas(thumbs[l][hh], EX.cell, 1).toDataURL("image/png");
        svg.appendChild(sEl("image", {
          x,
          y,
          width: EX.cell,
          height: EX.cell,
          href,
          preserveAspectRatio: "none",
          style: "image-rendering:pixelated"
        }));
        svg.appendChild(sEl("rect", {
          x: x - 0.5,
          y: y - 0.5,
          width: EX.cell + 1,
          height: EX.cell + 1,
          fill: "none",
          stroke: "#d5d8e0"
        }));
      }
    }
    return { svg, w, h };
  }
  const toolbar = hEl(
    "div",
    { class: "av-toolbar" },
    hEl(
      "div",
      { class: "av-title", style: "flex: 1 1 auto" },
      hEl("span", { class: "av-title-main" }, "Model view"),
      hEl("span", { class: "av-title-sub" }, ` \xB7 ${L} layers \xD7 ${H} heads \xB7 ${data.n} tokens`)
    ),
    hEl(
      "div",
      { class: "av-controls av-right" },
      toolButton("SVG", "Download the grid as SVG", () => {
        downloadSvg(exportSvg().svg, "model_view.svg");
      }),
      toolButton("PNG", "Download the grid as PNG", async () => {
        const { svg, w, h } = exportSvg();
        downloadBlob(await svgToPng(svg, w, h, 2), "model_view.png");
      })
    )
  );
  const pooled = data.pool === "max" ? ` Maps of ${data.n} tokens are max-pooled to ${s}\xD7${s}.` : "";
  const hint = hEl(
    "div",
    { class: "av-hint" },
    "Each map: query tokens top to bottom, key tokens left to right; darker = more attention (scaled to the map's maximum)." + pooled + " Click a map to open that head."
  );
  root.append(toolbar, hint, hEl("div", { class: "av-grid-wrap" }, grid));
  root.setAttribute("data-layers", String(L));
  root.setAttribute("data-heads", String(H));
  mark();
  return { mark };
}

// report.js
var enc = (v) => JSON.stringify(v ?? null);
function componentState(st, H) {
  const heads = headList(st.visible);
  return {
    view: st.view,
    layer: st.layer,
    heads: heads.length === H ? null : heads,
    pin: st.pinned ? { side: st.pinned.side, index: st.pinned.index } : null,
    segment: st.segment
  };
}
function pageAsks(ui, applied, sent) {
  const fromPage = [], apply = [];
  for (const k of STATE_KEYS) {
    const v = enc(ui && ui[k]);
    if (applied[k] === v) continue;
    applied[k] = v;
    fromPage.push(k);
    if (sent[k] !== v) apply.push(k);
  }
  return { fromPage, apply };
}
function applyAsk(st, k, value, dims) {
  const { L, H, labels } = dims;
  if (k === "view") {
    if (VIEW_KINDS.includes(value)) st.view = value;
  } else if (k === "layer") {
    if (Number.isInteger(value) && value >= 0 && value < L) st.layer = value;
  } else if (k === "heads") st.visible = headSet(value, H);
  else if (k === "pin") st.pinned = validPin(value, labels);
  else if (k === "segment") st.segment = SEGMENTS.includes(value) ? value : "All";
}
function remember(now, ...records) {
  for (const [k, v] of Object.entries(now)) for (const r of records) r[k] = enc(v);
}
function reportMessage(now, known) {
  const changed = Object.keys(now).filter((k) => enc(now[k]) !== known[k]);
  return changed.length ? { ...now, changed } : null;
}

// views.js
var SEND_DELAY = 350;
function viewsMain(component) {
  const t0 = performance.now();
  const { data, parentElement, setStateValue } = component;
  const problem = checkPayload(data, "views");
  showProblem(parentElement, problem);
  if (problem) return;
  const L = data.n_layers, H = data.n_heads, labels = data.labels;
  const ui = data.ui || {};
  const st = viewState(parentElement, () => ({
    view: "head",
    layer: 0,
    visible: null,
    pinned: null,
    segment: "All",
    applied: {},
    sent: {},
    timer: null,
    digest: null,
    tokens: null,
    edges: [],
    mounted: null
  }));
  const tokens = JSON.stringify(labels);
  if (st.tokens !== tokens) {
    st.pinned = null;
    st.tokens = tokens;
  }
  if (st.digest !== data.digest) {
    st.edges = [];
    st.digest = data.digest;
    st.mounted = null;
  }
  if (!st.visible || st.visibleOf !== H) {
    st.visible = /* @__PURE__ */ new Set([...Array(H).keys()]);
    st.visibleOf = H;
  }
  const current = () => componentState(st, H);
  const { fromPage, apply } = pageAsks(ui, st.applied, st.sent);
  for (const k of apply) applyAsk(st, k, ui[k] ?? null, { L, H, labels });
  if (!data.is_pair) st.segment = "All";
  if (st.view === "heatmap" && !data.heatmap) st.view = "head";
  if (st.view !== "heatmap" && !data.layers) st.view = "heatmap";
  st.known = st.known || {};
  for (const k of fromPage) st.known[k] = JSON.stringify(current()[k]);
  let root = parentElement.querySelector(".av-views");
  if (!root) {
    root = hEl("div", { class: "av-views" });
    parentElement.appendChild(root);
  }
  function edgesFor(l) {
    if (!st.edges[l]) {
      st.edges[l] = decodeEdges({ n_heads: H, n: data.n, encoding: data.encoding, ...data.layers[l] });
    }
    return st.edges[l];
  }
  let pageRun = true;
  function changed(initial) {
    const next = current();
    root.setAttribute("data-view", st.view);
    if (initial) {
      if (pageRun && !st.pending) {
        remember(next, st.sent, st.known);
      }
      return;
    }
    st.pending = true;
    clearTimeout(st.timer);
    st.timer = setTimeout(() => {
      st.pending = false;
      const now = current();
      const message = reportMessage(now, st.known);
      if (!message) return;
      remember(now, st.sent, st.known);
      setStateValue("state", message);
    }, SEND_DELAY);
  }
  function pickLayer(l) {
    const t = performance.now();
    st.layer = l;
    st.mounted.layer = l;
    st.mounted.handle.setLayer(l, edgesFor(l));
    viewTiming("layer-switch-js", performance.now() - t, { n: data.n, layer: l + 1 });
    requestAnimationFrame(() => setTimeout(() => viewTiming("layer-switch", performance.now() - t, { n: data.n, layer: l + 1 }), 0));
  }
  function mount() {
    const kind = st.view;
    const hm = data.heatmap;
    const sig = `${kind}|${data.digest}|${hm ? [hm.layer, hm.head, hm.n, hm.max].join(",") : ""}`;
    if (st.mounted && st.mounted.sig === sig && root.firstChild) {
      if (kind === "head") {
        if (st.mounted.layer !== st.layer) st.mounted.handle.setLayer(st.layer, edgesFor(st.layer), true);
        else st.mounted.handle.update(true);
        st.mounted.layer = st.layer;
      } else if (kind === "model") {
        st.mounted.handle.mark();
      }
      changed(true);
      return;
    }
    if (st.mounted && st.mounted.handle && st.mounted.handle.cleanup) st.mounted.handle.cleanup();
    const box = hEl("div", { class: `av-root av-${kind}` });
    root.replaceChildren(box);
    let handle;
    if (kind === "head") {
      const layerData = {
        n_heads: H,
        n: data.n,
        labels,
        segments: data.segments,
        special: data.special,
        is_pair: data.is_pair,
        layer: st.layer,
        top_k: data.top_k,
        threshold: 0,
        encoding: data.encoding,
        highlight: []
      };
      handle = mountHeadView(box, layerData, edgesFor(st.layer), st, {
        changed,
        layers: { count: L, pick: (l) => pickLayer(l) }
      });
      handle.update(true);
      st.mounted = { sig, handle, layer: st.layer };
    } else if (kind === "model") {
      const sel = { selected: [st.layer, headList(st.visible).length === 1 ? headList(st.visible)[0] : -1] };
      handle = mountModelView(box, data, sel, (l, h) => {
        const t = performance.now();
        st.view = "head";
        st.layer = l;
        st.visible = /* @__PURE__ */ new Set([h]);
        st.pinned = null;
        mount();
        changed(false);
        viewTiming("model-open", performance.now() - t, { n: data.n });
      });
      st.mounted = { sig, handle };
      changed(true);
    } else {
      handle = mountHeatmap(box, labels, data.heatmap, t0);
      st.mounted = { sig, handle };
      changed(true);
    }
    root.setAttribute("data-view", st.view);
    viewTiming(`mount-${kind}`, performance.now() - t0, { n: data.n });
  }
  mount();
  pageRun = false;
  return () => {
    if (st.mounted && st.mounted.handle && st.mounted.handle.cleanup) st.mounted.handle.cleanup();
  };
}
var views_default = viewsMain;
export {
  views_default as default,
  viewsMain
};
