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
function modelViewMain(component) {
  const { data, parentElement, setTriggerValue } = component;
  const problem = checkPayload(data, "model");
  showProblem(parentElement, problem);
  if (problem) return;
  const ui = data.ui || {};
  const st = viewState(parentElement, () => ({ selected: null, initSel: void 0 }));
  const initSel = JSON.stringify(ui.selected ?? null);
  if (st.initSel !== initSel) {
    st.selected = Array.isArray(ui.selected) ? ui.selected : null;
    st.initSel = initSel;
  }
  let root = parentElement.querySelector(".av-root");
  if (!root) {
    root = hEl("div", { class: "av-root av-model" });
    parentElement.appendChild(root);
  }
  mountModelView(root, data, st, (l, h) => setTriggerValue("select", [l, h]));
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
var model_view_default = modelViewMain;
export {
  model_view_default as default,
  modelViewMain,
  mountModelView
};
