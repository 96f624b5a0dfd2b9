// Label thinning of the canvas heatmap and label truncation of the head view (labels.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { fitLabel, thinLabels } from "../../ui/common/attention/frontend/labels.js";

test("512 tokens over 760 px: one label every 9 cells (13 px apart at least)", () => {
  const { step, marks } = thinLabels(0, 512, 760, 13);
  // a cell is 760 / 512 = 1.484375 px; 13 / 1.484375 = 8.76 -> 9
  assert.equal(step, 9);
  assert.equal(marks.length, 57); // 0, 9, ..., 504
  assert.deepEqual(marks[0], { index: 0, pos: 0.7421875 });
  assert.deepEqual(marks[1], { index: 9, pos: 14.1015625 });
  assert.equal(marks.at(-1).index, 504);
});

test("zoomed in, every label shows, centred on its cell", () => {
  const { step, marks } = thinLabels(100, 110, 760, 13);
  assert.equal(step, 1);
  assert.deepEqual(marks.map((m) => m.index), [100, 101, 102, 103, 104, 105, 106, 107, 108, 109]);
  assert.equal(marks[0].pos, 38);
  assert.equal(marks[9].pos, 722);
});

test("labels never sit closer than a line, whatever the zoom", () => {
  for (const n of [2, 13, 97, 300, 512, 2000]) {
    for (const px of [200, 333, 760]) {
      const { marks } = thinLabels(0, n, px, 13);
      for (let k = 1; k < marks.length; k++) assert.ok(marks[k].pos - marks[k - 1].pos >= 13 - 1e-9);
      assert.equal(marks[0].index, 0);
    }
  }
});

test("a label too wide is cut with an ellipsis; one that fits is kept", () => {
  const width = (t) => 10 * [...t].length;
  assert.equal(fitLabel("abcdefghij", 50, width), "abcd\u2026");
  assert.equal(fitLabel("abcde", 50, width), "abcde");
  assert.equal(fitLabel(42, 50, width), "42");
  assert.equal(fitLabel("abc", 5, width), "a\u2026"); // never cut to nothing
});
