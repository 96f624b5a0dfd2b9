// Canvas heatmap of one head for long inputs (up to 512 x 512 tokens and more): zoom by
// brushing a region, token labels thinned to what fits (full text on hover), row/column
// highlight, Vega's "blues" scheme from 0 to the map's maximum (as the small Altair heatmap).
// Token labels are data: textContent only.

import { downloadBlob, hEl, toolButton, viewTiming } from "./dom.js";
import { thinLabels } from "./labels.js";
import { b64Bytes } from "./payload.js";

// Vega's "blues" continuous scheme (vega-scale), interpolated as d3.interpolateRgbBasis does.
const VEGA_BLUES = "cfe1f2bed8eca8cee58fc1de74b2d75ba3cf4592c63181bd206fb2125ca40a4a90";

export function basisLut(hex) {
  const stops = [];
  for (let k = 0; k < hex.length; k += 6) {
    const v = parseInt(hex.slice(k, k + 6), 16);
    stops.push([(v >> 16) & 255, (v >> 8) & 255, v & 255]);
  }
  const m = stops.length - 1;
  const basis = (t1, v0, v1, v2, v3) => {
    const t2 = t1 * t1, t3 = t2 * t1;
    return ((1 - 3 * t1 + 3 * t2 - t3) * v0 + (4 - 6 * t2 + 3 * t3) * v1 +
      (1 + 3 * t1 + 3 * t2 - 3 * t3) * v2 + t3 * v3) / 6;
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
const HM_LUT = basisLut(VEGA_BLUES);

// hm: {layer, head, n, max, weights (b64 n*n uint8, q = round(w / max * 255))}.
export function mountHeatmap(root, labels, hm, t0) {
  const n = hm.n, top = hm.max;
  const q = b64Bytes(hm.weights);
  const weightOf = (i, j) => (q[i * n + j] * top) / 255;
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
    plot.toBlob((b) => b && downloadBlob(b, `heatmap_L${hm.layer + 1}_H${hm.head + 1}_view.png`),
      "image/png");
  });
  const legend = hEl("div", { class: "av-hm-legend" }, "0",
    hEl("span", { class: "av-hm-ramp" }), top.toFixed(3));
  const toolbar = hEl("div", { class: "av-toolbar" }, title,
    hEl("div", { class: "av-controls" }, hEl("span", { class: "av-label" }, "Weight"), legend),
    hEl("div", { class: "av-controls av-right" }, reset, png));
  const hint = hEl("div", { class: "av-hint" },
    "Rows are queries (from), columns keys (to); colour from 0 to the map's largest weight. " +
    "Drag over the map to zoom into a region; hover a cell for its tokens and weight; " +
    "double-click or Reset zoom to see the whole map. Labels are thinned to what fits.");

  const plot = hEl("canvas", { class: "av-hm-plot", width: Math.round(P * dpr),
    height: Math.round(P * dpr), style: `width:${P}px;height:${P}px`,
    role: "img", "aria-label": `Attention map, layer ${hm.layer + 1}, head ${hm.head + 1}` });
  const over = hEl("canvas", { class: "av-hm-over", width: Math.round(P * dpr),
    height: Math.round(P * dpr), style: `width:${P}px;height:${P}px` });
  const ylab = hEl("div", { class: "av-hm-ylabels", style: `width:${LABEL_W}px;height:${P}px` });
  const xlab = hEl("div", { class: "av-hm-xlabels", style: `width:${P}px;height:${LABEL_W}px` });
  const tip = hEl("div", { class: "av-hm-tip", role: "tooltip" });
  tip.style.display = "none";
  const stage = hEl("div", { class: "av-hm-stage", style: `width:${P}px;height:${P}px` },
    plot, over, tip);
  const grid = hEl("div", { class: "av-hm-grid",
    style: `grid-template-columns:${LABEL_W}px ${P}px` },
    ylab, stage, hEl("div", null), xlab);
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
        px[k] = HM_LUT[3 * v]; px[k + 1] = HM_LUT[3 * v + 1]; px[k + 2] = HM_LUT[3 * v + 2];
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
      hEl("span", { class: "av-title-sub" }, ` \u00b7 ${n} tokens` + (zoomed
        ? ` \u00b7 rows ${zoom.r0 + 1}\u2013${zoom.r1}, columns ${zoom.c0 + 1}\u2013${zoom.c1}` : "")));
    reset.disabled = !zoomed;
    root.setAttribute("data-zoom", `${zoom.r0},${zoom.r1},${zoom.c0},${zoom.c1}`);
  }

  // One label every `step` cells so that labels are at least LINE px apart.
  function labelsFor(box, a, b, axis) {
    const { step, marks } = thinLabels(a, b, P, LINE);
    const nodes = marks.map(({ index, pos }) => {
      const node = hEl("span", { class: `av-hm-lab av-hm-${axis}lab`, "data-index": index },
        String(labels[index]));
      node.style[axis === "y" ? "top" : "left"] = `${pos - LINE / 2}px`; // may poke out by half a line
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
    return { i: zoom.r0 + Math.min(rows - 1, Math.floor((y / r.height) * rows)),
      j: zoom.c0 + Math.min(cols - 1, Math.floor((x / r.width) * cols)), x, y };
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
    if (!c) { tip.style.display = "none"; return; }
    tip.replaceChildren(
      hEl("div", null, hEl("b", null, "from "), `${c.i + 1}: `, String(labels[c.i])),
      hEl("div", null, hEl("b", null, "to "), `${c.j + 1}: `, String(labels[c.j])),
      hEl("div", null, hEl("b", null, "weight "), weightOf(c.i, c.j).toFixed(3)));
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
  over.addEventListener("mouseleave", () => { overlay(null); showTip(null); });
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
    if (r1 - r0 >= 2 && c1 - c0 >= 2) setZoom(r0, r1, c0, c1); else overlay(null);
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
