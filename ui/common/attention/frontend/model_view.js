// Model view: a layers x heads grid of small attention maps (canvas). Clicking a map sends
// its (layer, head), 0-indexed, to Python as a trigger value.
// Entry of ui/common/attention/views.py model_view: modelViewMain (the default export).

import { downloadBlob, downloadSvg, FONT_STACK, hEl, sEl, showProblem, svgToPng, toolButton, viewState } from "./dom.js";
import { b64Bytes, checkPayload } from "./payload.js";

const BLUES = ["#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5",
  "#08519c", "#08306b"];

function hexRgb(hex) {
  const v = parseInt(hex.slice(1), 16);
  return [(v >> 16) & 255, (v >> 8) & 255, v & 255];
}

const LUT = (() => {
  const stops = BLUES.map(hexRgb);
  const lut = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i++) {
    const t = (i / 255) * (stops.length - 1);
    const k = Math.min(stops.length - 2, Math.floor(t));
    const f = t - k;
    for (let c = 0; c < 3; c++) lut[i * 3 + c] = stops[k][c] + (stops[k + 1][c] - stops[k][c]) * f;
  }
  return lut;
})();

// One thumbnail as an s x s canvas, colour scaled to the map's own maximum.
function thumbCanvas(q, offset, s) {
  let max = 0;
  for (let k = 0; k < s * s; k++) if (q[offset + k] > max) max = q[offset + k];
  const c = document.createElement("canvas");
  c.width = s;
  c.height = s;
  const ctx = c.getContext("2d");
  const img = ctx.createImageData(s, s);
  for (let k = 0; k < s * s; k++) {
    const v = max > 0 ? Math.round((q[offset + k] * 255) / max) : 0;
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

// Single model view component: data.view === "model"; a click is a trigger value.
export function modelViewMain(component) {
  const { data, parentElement, setTriggerValue } = component;
  const problem = checkPayload(data, "model");
  showProblem(parentElement, problem);
  if (problem) return;
  const ui = data.ui || {};
  const st = viewState(parentElement, () => ({ selected: null, initSel: undefined }));
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

// Draw the layers x heads grid into `root` (emptied): data {n_layers, n_heads, size, thumbs,
// n, pool}; st.selected = [l, h] or null is outlined; onPick(l, h) after a click.
export function mountModelView(root, data, st, onPick) {
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

  const grid = hEl("div", { class: "av-grid", role: "grid",
    style: `grid-template-columns: auto repeat(${H}, ${cell + 2}px);` });
  grid.appendChild(hEl("div", { class: "av-axis-title av-rowlabel" }, "Layer \u2193 / Head \u2192"));
  for (let h = 0; h < H; h++) grid.appendChild(hEl("div", { class: "av-axis" }, String(h + 1)));
  const cells = [];
  for (let l = 0; l < L; l++) {
    grid.appendChild(hEl("div", { class: "av-axis av-rowlabel" }, String(l + 1)));
    cells.push([]);
    for (let h = 0; h < H; h++) {
      const btn = hEl("button", { type: "button", class: "av-cell", "data-layer": l + 1,
        "data-head": h + 1, title: `Layer ${l + 1}, head ${h + 1}: click to open`,
        "aria-label": `Layer ${l + 1}, head ${h + 1}` }, scaledCanvas(thumbs[l][h], cell, dpr));
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

  // ---- export: one SVG (labels as text, maps as embedded PNG images) and one PNG
  const EX = { cell: 64, gap: 6, left: 56, top: 56 };
  function exportSize() {
    return {
      w: EX.left + H * (EX.cell + EX.gap) + 10,
      h: EX.top + L * (EX.cell + EX.gap) + 10,
    };
  }
  function exportSvg() {
    const { w, h } = exportSize();
    const svg = sEl("svg", { width: w, height: h, viewBox: `0 0 ${w} ${h}`, "font-family": FONT_STACK,
      "font-size": 11 });
    svg.appendChild(sEl("rect", { x: 0, y: 0, width: w, height: h, fill: "#ffffff" }));
    svg.appendChild(sEl("text", { x: EX.left, y: 18, "font-size": 13, "font-weight": 700, fill: "#262730" },
      `Model view: ${L} layers \u00d7 ${H} heads`));
    svg.appendChild(sEl("text", { x: EX.left + (H * (EX.cell + EX.gap)) / 2, y: 34, "text-anchor": "middle",
      fill: "#6b7280" }, "Head"));
    for (let hh = 0; hh < H; hh++) {
      svg.appendChild(sEl("text", { x: EX.left + hh * (EX.cell + EX.gap) + EX.cell / 2, y: EX.top - 6,
        "text-anchor": "middle", fill: "#6b7280" }, String(hh + 1)));
    }
    svg.appendChild(sEl("text", { x: 12, y: EX.top + (L * (EX.cell + EX.gap)) / 2, "text-anchor": "middle",
      fill: "#6b7280", transform: `rotate(-90 12 ${EX.top + (L * (EX.cell + EX.gap)) / 2})` }, "Layer"));
    for (let l = 0; l < L; l++) {
      const y = EX.top + l * (EX.cell + EX.gap);
      svg.appendChild(sEl("text", { x: EX.left - 8, y: y + EX.cell / 2 + 4, "text-anchor": "end",
        fill: "#6b7280" }, String(l + 1)));
      for (let hh = 0; hh < H; hh++) {
        const x = EX.left + hh * (EX.cell + EX.gap);
        const href = scaledCanvas(thumbs[l][hh], EX.cell, 1).toDataURL("image/png");
        svg.appendChild(sEl("image", { x, y, width: EX.cell, height: EX.cell, href,
          preserveAspectRatio: "none", style: "image-rendering:pixelated" }));
        svg.appendChild(sEl("rect", { x: x - 0.5, y: y - 0.5, width: EX.cell + 1, height: EX.cell + 1,
          fill: "none", stroke: "#d5d8e0" }));
      }
    }
    return { svg, w, h };
  }

  const toolbar = hEl("div", { class: "av-toolbar" },
    hEl("div", { class: "av-title", style: "flex: 1 1 auto" },
      hEl("span", { class: "av-title-main" }, "Model view"),
      hEl("span", { class: "av-title-sub" }, ` \u00b7 ${L} layers \u00d7 ${H} heads \u00b7 ${data.n} tokens`)),
    hEl("div", { class: "av-controls av-right" },
      toolButton("SVG", "Download the grid as SVG", () => {
        downloadSvg(exportSvg().svg, "model_view.svg");
      }),
      toolButton("PNG", "Download the grid as PNG", async () => {
        const { svg, w, h } = exportSvg();
        downloadBlob(await svgToPng(svg, w, h, 2), "model_view.png");
      })));
  const pooled = data.pool === "max"
    ? ` Maps of ${data.n} tokens are max-pooled to ${s}\u00d7${s}.` : "";
  const hint = hEl("div", { class: "av-hint" },
    "Each map: query tokens top to bottom, key tokens left to right; darker = more attention " +
    "(scaled to the map's maximum)." + pooled + " Click a map to open that head.");
  root.append(toolbar, hint, hEl("div", { class: "av-grid-wrap" }, grid));
  root.setAttribute("data-layers", String(L));
  root.setAttribute("data-heads", String(H));
  mark();
  return { mark };
}

export default modelViewMain;
