// The head view as a standalone SVG for download: a heading, a legend of the heads shown and a
// copy of the drawn view (dimmed tokens faded, colours fixed for a white background).

import { FONT_STACK, sEl, textWidth } from "./dom.js";
import { headColour, SEGMENT_LABELS } from "./heads.js";

// `svg`: the view's drawing; opts {layerNo, segment, visible (0-indexed heads), pad, width,
// height, fontSize} as laid out by mountHeadView. Returns {svg, w, h}.
export function exportHeadView(svg, opts) {
  const { layerNo, segment, visible, pad, width, height, fontSize } = opts;
  const heading = `Layer ${layerNo + 1}` +
    (segment !== "All" ? ` \u00b7 ${SEGMENT_LABELS[segment]}` : "");
  const x0 = pad + Math.ceil(textWidth(heading, `700 ${fontSize}px ${FONT_STACK}`)) + 16;
  const step = 34;
  const perRow = Math.max(1, Math.floor((width - x0 - pad) / step));
  const legendRows = Math.max(1, Math.ceil(visible.length / perRow));
  const band = 16 + 20 * legendRows;
  const w = width, h = height + band;
  const out = sEl("svg", { width: w, height: h, viewBox: `0 0 ${w} ${h}`, "font-family": FONT_STACK,
    "font-size": fontSize, style: "color:#262730" });
  out.appendChild(sEl("rect", { x: 0, y: 0, width: w, height: h, fill: "#ffffff" }));
  out.appendChild(sEl("text", { x: pad, y: 20, "font-weight": 700, fill: "#262730" }, heading));
  visible.forEach((hh, k) => {
    const x = x0 + (k % perRow) * step, y = 9 + 20 * Math.floor(k / perRow);
    out.appendChild(sEl("rect", { x, y, width: 12, height: 12, rx: 2, fill: headColour(hh) }));
    out.appendChild(sEl("text", { x: x + 15, y: y + 10.5, "font-size": 11, fill: "#262730" },
      String(hh + 1)));
  });
  const content = svg.cloneNode(true);
  content.removeAttribute("class");
  content.querySelectorAll(".av-bg").forEach((node) => node.remove());
  content.querySelectorAll(".av-dim").forEach((node) => node.setAttribute("opacity", "0.3"));
  content.querySelectorAll("text[fill='currentColor']").forEach((node) => node.setAttribute("fill", "#262730"));
  content.querySelectorAll(".av-colhead").forEach((node) => { node.setAttribute("fill", "#6b7280"); node.setAttribute("font-size", "11"); });
  content.setAttribute("x", "0");
  content.setAttribute("y", String(band));
  out.appendChild(content);
  return { svg: out, w, h };
}
