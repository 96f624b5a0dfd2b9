// Token labels that fit: thinning along a heatmap axis, truncation in the head view
// (no DOM: the text measure is passed in; Node tests import it).

// Cells a..b-1 drawn over `px` pixels: one label every `step` cells so that labels are at least
// `line` px apart. Returns {step, marks: [{index, pos}]} with pos the centre of the cell (px).
export function thinLabels(a, b, px, line) {
  const cell = px / (b - a);
  const step = Math.max(1, Math.ceil(line / cell));
  const marks = [];
  for (let i = a; i < b; i += step) marks.push({ index: i, pos: (i - a + 0.5) * cell });
  return { step, marks };
}

// `text` cut to at most `max` px wide (measured by `width(text)`), an ellipsis marking a cut.
export function fitLabel(text, max, width) {
  const s = String(text);
  if (width(s) <= max) return s;
  let cut = s;
  while (cut.length > 1 && width(cut + "\u2026") > max) cut = cut.slice(0, -1);
  return cut + "\u2026";
}
