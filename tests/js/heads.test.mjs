// Head colours, the segment filter and the lines the head view draws (heads.js, lines.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { SEGMENTS } from "../../ui/common/attention/frontend/constants.js";
import {
  HEAD_COLOURS, headColour, headsText, SEGMENT_LABELS, segmentAllows, sideAllows,
} from "../../ui/common/attention/frontend/heads.js";
import {
  bucketOf, lineBuckets, minWeightShown, partnerWeights,
} from "../../ui/common/attention/frontend/lines.js";

test("20 distinct palette colours, then distinct generated hues", () => {
  assert.equal(headColour(0), "#1f77b4");
  assert.equal(headColour(11), "#ad494a");
  assert.equal(headColour(19), "#756bb1");
  assert.equal(new Set(HEAD_COLOURS).size, 20);
  // head 21 (index 20): 20 * 137.508 = 2750.16 degrees = 230.16 mod 360
  assert.match(headColour(20), /^hsl\(230\.16\d*, 60%, 45%\)$/);
  const many = Array.from({ length: 64 }, (_, h) => headColour(h));
  assert.equal(new Set(many).size, 64);
});

test("segment filter: which (query segment, key segment) lines each filter keeps", () => {
  const pairs = [[0, 0], [1, 1], [0, 1], [1, 0]];
  const kept = Object.fromEntries(SEGMENTS.map((f) => [f,
    pairs.filter(([q, k]) => segmentAllows(f, q, k)).map((p) => p.join(""))]));
  assert.deepEqual(kept, { "All": ["00", "11", "01", "10"], "A->A": ["00"], "B->B": ["11"],
    "A->B": ["01"], "B->A": ["10"] });
  assert.equal(sideAllows("A->B", "from", 0), true);
  assert.equal(sideAllows("A->B", "from", 1), false);
  assert.equal(sideAllows("A->B", "to", 1), true);
  assert.equal(sideAllows("All", "to", 0), true);
  assert.equal(SEGMENT_LABELS["B->A"], "B\u2192A");
});

test("the title's account of the heads shown", () => {
  assert.equal(headsText([...Array(12).keys()], 12), "all 12 heads");
  assert.equal(headsText([], 12), "no heads");
  assert.equal(headsText([4], 12), "head 5");
  assert.equal(headsText([0, 2, 11], 12), "heads 1, 3, 12");
  assert.equal(headsText([0, 1, 2, 3, 4, 5, 6], 12), "7 of 12 heads");
});

// 1 head, 3 tokens, segments A A B; rows: q0 -> k0 200, k2 55; q1 -> (none); q2 -> k1 255, k2 1
const edges = { rowStart: Uint32Array.from([0, 2, 2, 4]), keys: Uint16Array.from([0, 2, 1, 2]),
  wts: Uint8Array.from([200, 55, 255, 1]) };
const seg = [0, 0, 1];

test("without a focus token, the weakest lines go first past the budget", () => {
  assert.equal(minWeightShown(edges, [0], 3, seg, "All", 8000), 3); // weight 1 is below 3/255
  assert.equal(minWeightShown(edges, [0], 3, seg, "All", 2), 56); // 255 and 200 only
  assert.equal(minWeightShown(edges, [0], 3, seg, "A->B", 1), 3); // only q0 -> k2 (55) passes
  assert.equal(minWeightShown(edges, [], 3, seg, "All", 1), 3);
});

test("lines by opacity bucket, through the filter and the focus", () => {
  assert.equal(bucketOf(255), 19);
  assert.equal(bucketOf(128), 10);
  assert.equal(bucketOf(1), 0);
  const path = (i, j) => `${i}-${j}`;
  const drawn = (b) => b.flatMap((lines, k) => lines.map((l) => `${l}@${k}`));
  assert.deepEqual(drawn(lineBuckets(edges, 0, 3, seg, "All", null, 3, path)), ["0-2@4", "0-0@15", "2-1@19"]);
  assert.deepEqual(drawn(lineBuckets(edges, 0, 3, seg, "B->A", null, 1, path)), ["2-1@19"]);
  assert.deepEqual(drawn(lineBuckets(edges, 0, 3, seg, "All", { side: "to", index: 2 }, 1, path)),
    ["2-2@0", "0-2@4"]);
  assert.deepEqual(drawn(lineBuckets(edges, 0, 3, seg, "All", { side: "from", index: 0 }, 1, path)),
    ["0-2@4", "0-0@15"]);
});

test("a focused token's partner weights: 0.01 and up, through the filter", () => {
  assert.deepEqual(partnerWeights(edges, 0, 3, seg, "All", { side: "from", index: 2 }), [[1, 255]]);
  assert.deepEqual(partnerWeights(edges, 0, 3, seg, "All", { side: "to", index: 2 }), [[0, 55]]);
  assert.deepEqual(partnerWeights(edges, 0, 3, seg, "A->A", { side: "from", index: 0 }), [[0, 200]]);
});
