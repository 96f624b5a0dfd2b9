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
function showProblem(parentElement, message) {
  const old = parentElement.querySelector(".av-problem");
  if (old) old.remove();
  if (message) parentElement.appendChild(hEl("div", { class: "av-problem", role: "alert" }, message));
}

// constants.js
var SEGMENTS = ["All", "A->A", "B->B", "A->B", "B->A"];
var PIN_SIDES = ["from", "to"];

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

// report.js
var enc = (v) => JSON.stringify(v ?? null);
function headViewState(st) {
  return {
    heads: headList(st.visible),
    pinned: st.pinned ? { side: st.pinned.side, index: st.pinned.index, token: st.pinned.token } : null,
    segment: st.segment
  };
}
function unsent(next, sent) {
  return Object.entries(next).filter(([k, v]) => sent[k] !== enc(v));
}

// head_view_single.js
function headViewMain(component) {
  const { data, parentElement, setStateValue } = component;
  const problem = checkPayload(data, "head");
  showProblem(parentElement, problem);
  if (problem) return;
  const H = data.n_heads;
  const labels = data.labels;
  const ui = data.ui || {};
  const st = viewState(parentElement, () => ({
    visible: null,
    pinned: null,
    segment: "All",
    sig: null,
    initHeads: void 0,
    sent: {},
    timer: null
  }));
  const sig = JSON.stringify([H, labels]);
  if (st.sig !== sig) {
    st.pinned = null;
    st.initPin = void 0;
    if (st.nHeads !== H) st.visible = null;
    st.nHeads = H;
    st.sig = sig;
  }
  const initPin = JSON.stringify(ui.pin ?? null);
  if (st.initPin !== initPin) {
    st.pinned = validPin(ui.pin, labels);
    st.initPin = initPin;
  }
  const initHeads = JSON.stringify(ui.heads ?? null);
  if (st.initHeads !== initHeads) {
    st.visible = headSet(ui.heads, H);
    st.initHeads = initHeads;
  }
  if (!st.visible) st.visible = /* @__PURE__ */ new Set([...Array(H).keys()]);
  if (!data.is_pair) st.segment = "All";
  let root = parentElement.querySelector(".av-root");
  if (!root) {
    root = hEl("div", { class: "av-root av-head" });
    parentElement.appendChild(root);
  }
  const handle = mountHeadView(root, data, decodeEdges(data), st, {
    // State goes back to Python only after the user changed something (each change reruns
    // the page); the first render records the baseline.
    changed(initial) {
      const next = headViewState(st);
      if (initial) {
        for (const [k, v] of Object.entries(next)) {
          if (st.sent[k] === void 0) st.sent[k] = JSON.stringify(v);
        }
      }
      clearTimeout(st.timer);
      st.timer = setTimeout(() => {
        for (const [k, v] of unsent(next, st.sent)) {
          st.sent[k] = JSON.stringify(v);
          setStateValue(k, v);
        }
      }, initial ? 0 : 300);
    }
  });
  handle.update(true);
  return handle.cleanup;
}
var head_view_single_default = headViewMain;
export {
  head_view_single_default as default,
  headViewMain
};
