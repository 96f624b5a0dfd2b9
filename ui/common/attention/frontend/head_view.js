// Head view: one layer, tokens in two columns (left = query / from, right = key / to), a line
// from every query to every kept key, weight as opacity, heads as colours.

import { SEGMENTS } from "./constants.js";
import { downloadBlob, downloadSvg, FONT_STACK, hEl, sEl, svgToPng, textWidth, toolButton } from "./dom.js";
import { exportHeadView } from "./head_view_export.js";
import { headColour, headsText, SEG_COLOURS, SEGMENT_LABELS, sideAllows } from "./heads.js";
import { fitLabel } from "./labels.js";
import { LINE_BUDGET, lineBuckets, MIN_Q_ALL, minWeightShown, N_BUCKETS, partnerWeights } from "./lines.js";
import { headList } from "./payload.js";


// Draw a head view into `root` (emptied). `data`: labels, segments, special, is_pair, n_heads,
// n, layer, top_k, threshold, encoding, highlight; `edges`: decodeEdges of the layer drawn.
// `st`: shared state {visible, pinned, segment}; `hooks.changed(initial)` after every change;
// `hooks.layers` (optional): {count, pick(l)} adds layer buttons to the toolbar.
// Returns {update, setLayer(l, edges), cleanup}.
export function mountHeadView(root, data, layerEdges, st, hooks) {
  let edges = layerEdges;
  const H = data.n_heads, n = data.n;
  const labels = data.labels, seg = data.segments, special = data.special;
  const isPair = !!data.is_pair;
  let layerNo = data.layer;
  let hover = null;
  const marked = new Set(Array.isArray(data.highlight) ? data.highlight : []);

  // ---- layout
  const fontSize = n <= 60 ? 13 : n <= 150 ? 12 : 11;
  const rowH = n <= 60 ? 22 : n <= 150 ? 18 : 15;
  const font = `${fontSize}px ${FONT_STACK}`;
  const MAX_LABEL = 170;
  const shown = labels.map((label) => fitLabel(label, MAX_LABEL, (t) => textWidth(t, font)));
  const boldFont = `700 ${font}`; // marked tokens are bold: measure them so
  const shownW = shown.map((t, i) => textWidth(t, marked.has(i) ? boldFont : font));
  const headFont = `600 11px ${FONT_STACK}`;
  const labelW = Math.ceil(Math.max(
    textWidth("QUERY (FROM)", headFont) * 1.08, ...shownW)) + 18;
  const host = root.getRootNode().host || root.parentNode || root;
  const avail = Math.max(360, (host.clientWidth || 720) - 8);
  const gap = Math.max(140, Math.min(300, avail - 2 * labelW - 24));
  const numW = 40; // room for the weights shown beside a focused token's partners
  const pad = 10 + numW;
  const width = pad * 2 + labelW * 2 + gap;
  const top = 30;
  const height = top + n * rowH + 8;
  const xL = pad + labelW, xR = xL + gap;
  const yOf = (i) => top + i * rowH + rowH / 2;

  // ---- DOM
  const oldBody = root.querySelector(".av-body");
  const scroll = oldBody ? [oldBody.scrollTop, oldBody.scrollLeft] : null;
  root.replaceChildren();

  const title = hEl("div", { class: "av-title" });
  const legend = hEl("div", { class: "av-legend", role: "group", "aria-label": "Heads" });
  const swatches = [];
  for (let h = 0; h < H; h++) {
    const sw = hEl("button", {
      type: "button", class: "av-swatch", "data-head": h + 1,
      title: `Head ${h + 1}: click to show or hide, double-click to show only this head`,
    }, String(h + 1));
    sw.style.setProperty("--c", headColour(h));
    sw.addEventListener("click", () => {
      if (st.visible.has(h)) st.visible.delete(h); else st.visible.add(h);
      update();
    });
    sw.addEventListener("dblclick", (e) => {
      e.preventDefault();
      const only = st.visible.size === 1 && st.visible.has(h);
      st.visible = only ? new Set([...Array(H).keys()]) : new Set([h]);
      update();
    });
    swatches.push(sw);
    legend.appendChild(sw);
  }
  const allBtn = toolButton("All", "Show every head", () => {
    st.visible = new Set([...Array(H).keys()]);
    update();
  });
  const noneBtn = toolButton("None", "Hide every head", () => { st.visible = new Set(); update(); });

  const segBox = hEl("div", { class: "av-seg", role: "group", "aria-label": "Segment filter" });
  const segButtons = {};
  if (isPair) {
    for (const s of SEGMENTS) {
      const b = toolButton(SEGMENT_LABELS[s], s === "All" ? "Lines between all tokens"
        : `Only lines from segment ${s[0]} to segment ${s[3]}`, () => { st.segment = s; update(); },
        { "data-segment": s });
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
      const b = toolButton(String(l + 1), `Show layer ${l + 1}`, () => hooks.layers.pick(l),
        { "data-layer": l + 1 });
      b.classList.toggle("av-active", l === layerNo);
      layerButtons.push(b);
      layerBox.appendChild(b);
    }
  }

  const toolbar = hEl("div", { class: "av-toolbar" },
    title,
    layerBox ? hEl("div", { class: "av-controls" }, hEl("span", { class: "av-label" }, "Layer"),
      layerBox) : null,
    hEl("div", { class: "av-controls" },
      hEl("span", { class: "av-label" }, "Heads"), legend, allBtn, noneBtn),
    isPair ? hEl("div", { class: "av-controls" }, hEl("span", { class: "av-label" }, "Segments"),
      segBox) : null,
    hEl("div", { class: "av-controls av-right" }, svgBtn, pngBtn));

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
    class: "av-svg", width, height, viewBox: `0 0 ${width} ${height}`,
    "font-family": FONT_STACK, "font-size": fontSize, role: "img",
    "aria-label": `Attention head view, layer ${layerNo + 1}`,
  });
  const bg = sEl("rect", { x: 0, y: 0, width, height, fill: "transparent", class: "av-bg" });
  bg.addEventListener("click", () => { if (st.pinned) { st.pinned = null; update(); } });
  svg.appendChild(bg);
  svg.appendChild(sEl("text", { x: xL - 10, y: 16, "text-anchor": "end", class: "av-colhead",
    fill: "currentColor" }, "Query (from)"));
  svg.appendChild(sEl("text", { x: xR + 10, y: 16, "text-anchor": "start", class: "av-colhead",
    fill: "currentColor" }, "Key (to)"));
  const linesG = sEl("g", { class: "av-lines", fill: "none", "stroke-linecap": "round" });
  svg.appendChild(linesG);
  const weightsG = sEl("g", { class: "av-weights", "font-size": Math.max(10, fontSize - 2),
    "dominant-baseline": "central" });
  svg.appendChild(weightsG);

  const tokNodes = { from: [], to: [] };
  for (const side of ["from", "to"]) {
    const g = sEl("g", { class: `av-col av-col-${side}` });
    for (let i = 0; i < n; i++) {
      const y = yOf(i);
      const x0 = side === "from" ? pad : xR;
      const hit = sEl("rect", { x: x0, y: y - rowH / 2, width: labelW, height: rowH, rx: 3,
        class: "av-tokbg", fill: "transparent" });
      const textAttrs = side === "from"
        ? { x: xL - 10, y, "text-anchor": "end" } : { x: xR + 10, y, "text-anchor": "start" };
      const text = sEl("text", { ...textAttrs, "dominant-baseline": "central",
        class: special[i] ? "av-tok-text av-special" : "av-tok-text",
        fill: special[i] ? "#8a8f98" : "currentColor" }, shown[i]);
      const tg = sEl("g", { class: marked.has(i) ? "av-tok av-marked" : "av-tok",
        "data-side": side, "data-index": i, "data-token": labels[i] }, hit);
      if (isPair) {
        const bx = side === "from" ? pad + 1 : xR + labelW - 4;
        tg.appendChild(sEl("rect", { x: bx, y: y - rowH / 2 + 3, width: 3, height: rowH - 6,
          rx: 1.5, fill: SEG_COLOURS[seg[i] ? 1 : 0], class: "av-segbar" }));
      }
      tg.appendChild(text);
      if (shown[i] !== String(labels[i])) tg.appendChild(sEl("title", null, String(labels[i])));
      tg.addEventListener("mouseenter", () => { hover = { side, index: i }; draw(); });
      tg.addEventListener("mouseleave", () => { hover = null; draw(); });
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
  const segLegend = isPair ? hEl("div", { class: "av-seglegend" },
    hEl("span", { class: "av-segkey", style: `--c:${SEG_COLOURS[0]}` }), "Segment A",
    hEl("span", { class: "av-segkey", style: `--c:${SEG_COLOURS[1]}` }), "Segment B") : null;
  root.append(toolbar, hint, body);
  if (scroll) [body.scrollTop, body.scrollLeft] = scroll; // keep the place on a layer switch
  if (segLegend) root.appendChild(segLegend);
  root.setAttribute("data-layer", String(layerNo + 1));
  root.setAttribute("data-n", String(n));

  function focus() { return st.pinned || hover; }

  function draw() {
    const f = focus();
    const visible = headList(st.visible);
    const paths = [];
    const minQ = f ? 1 : minWeightShown(edges, visible, n, seg, st.segment);
    root.setAttribute("data-min-weight", String(minQ));
    faint.textContent = minQ > MIN_Q_ALL ? ` Lines under ${(minQ / 255).toFixed(3)} are hidden ` +
      `(at most ${LINE_BUDGET} lines); hover or pin a token to see all of its lines.` : "";
    const strokeW = f ? 2.2 : (n > 150 ? 1.2 : 1.8);
    const path = (i, j) => `M${xL} ${yOf(i)}L${xR} ${yOf(j)}`;
    for (const h of visible) {
      const buckets = lineBuckets(edges, h, n, seg, st.segment, f, minQ, path);
      for (let b = 0; b < N_BUCKETS; b++) {
        if (!buckets[b].length) continue;
        paths.push(sEl("path", { d: buckets[b].join(""), stroke: headColour(h),
          "stroke-opacity": ((b + 0.5) / N_BUCKETS).toFixed(3), "stroke-width": strokeW,
          "data-head": h + 1 }));
      }
    }
    linesG.replaceChildren(...paths);
    // one head and a focused token: its partners' weights as numbers
    const nums = [];
    if (f && visible.length === 1) {
      const h = visible[0];
      const other = f.side === "from" ? "to" : "from";
      const anchor = other === "to" ? "start" : "end";
      for (const [k, q] of partnerWeights(edges, h, n, seg, st.segment, f)) {
        const x = other === "to" ? xR + 16 + shownW[k] : xL - 16 - shownW[k];
        nums.push(sEl("text", { x, y: yOf(k), "text-anchor": anchor, fill: "currentColor",
          "fill-opacity": 0.7, "font-weight": 600, "data-index": k }, (q / 255).toFixed(2)));
      }
    }
    weightsG.replaceChildren(...nums);
    for (const side of ["from", "to"]) {
      tokNodes[side].forEach((t, i) => {
        const active = sideAllows(st.segment, side, seg[i]);
        const focused = !!(f && f.side === side && f.index === i);
        const pinned = !!(st.pinned && st.pinned.side === side && st.pinned.index === i);
        const key = (active ? 1 : 0) | (focused ? 2 : 0) | (pinned ? 4 : 0);
        if (t.key === key) return; // touch only the tokens whose look changes
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
      hEl("span", { class: "av-title-sub" },
        ` \u00b7 ${headsText(visible, H)} \u00b7 ${n} ${n === 1 ? "token" : "tokens"}` +
        (st.segment !== "All" ? ` \u00b7 ${SEGMENT_LABELS[st.segment]}` : "") +
        (st.pinned ? ` \u00b7 pinned: ${st.pinned.side === "from" ? "from" : "to"} \u201c${st.pinned.token}\u201d` : "")));
    root.setAttribute("data-heads", visible.map((h) => h + 1).join(","));
    root.setAttribute("data-segment", st.segment);
    draw();
    hooks.changed(!!initial);
  }

  function exportSvg() {
    return exportHeadView(svg, { layerNo, segment: st.segment, visible: headList(st.visible),
      pad, width, height, fontSize });
  }

  const onKey = (e) => { if (e.key === "Escape" && st.pinned) { st.pinned = null; update(); } };
  document.addEventListener("keydown", onKey);
  return {
    update,
    // fromPage: the page asked for this layer (nothing to report back)
    setLayer(l, layerEdges, fromPage) {
      layerNo = l;
      edges = layerEdges;
      root.setAttribute("data-layer", String(l + 1));
      svg.setAttribute("aria-label", `Attention head view, layer ${l + 1}`);
      for (const b of layerButtons) b.classList.toggle("av-active", Number(b.dataset.layer) === l + 1);
      update(!!fromPage);
    },
    cleanup() { document.removeEventListener("keydown", onKey); },
  };
}
