// Payload decoding and checking (ui/common/attention/frontend/payload.js): hand-built payloads.
import assert from "node:assert/strict";
import { test } from "node:test";

import { PAYLOAD_VERSION, VIEWS_VERSION } from "../../ui/common/attention/frontend/constants.js";
import {
  b64Bytes, b64Uint16, checkPayload, decodeEdges, headList, headSet, validPin,
} from "../../ui/common/attention/frontend/payload.js";

const b64 = (bytes) => Buffer.from(bytes).toString("base64");
const u16 = (values) => b64(new Uint8Array(new Uint16Array(values).buffer)); // little-endian host

test("base64 bytes and little-endian uint16", () => {
  assert.deepEqual([...b64Bytes("AAH/")], [0, 1, 255]);
  assert.deepEqual([...b64Bytes("")], []);
  // 0x0001, 0x0100 as little-endian bytes 01 00 00 01
  assert.deepEqual([...b64Uint16("AQAAAQ==")], [1, 256]);
  assert.deepEqual([...b64Uint16(u16([0, 65535, 513]))], [0, 65535, 513]);
});

test("dense layer: zero weights are not edges, rows in (head, query) order", () => {
  // 2 heads x 2 tokens: head 0 rows [0, 128] [255, 0]; head 1 rows [1, 2] [0, 0]
  const e = decodeEdges({ n_heads: 2, n: 2, encoding: "dense", weights: b64([0, 128, 255, 0, 1, 2, 0, 0]) });
  assert.deepEqual([...e.rowStart], [0, 1, 2, 4, 4]);
  assert.deepEqual([...e.keys], [1, 0, 0, 1]);
  assert.deepEqual([...e.wts], [128, 255, 1, 2]);
});

test("sparse layer: counts per row, then keys and weights", () => {
  const e = decodeEdges({ n_heads: 1, n: 3, encoding: "sparse", counts: u16([2, 0, 1]),
    keys: u16([0, 2, 1]), weights: b64([200, 55, 255]) });
  assert.deepEqual([...e.rowStart], [0, 2, 2, 3]);
  assert.deepEqual([...e.keys], [0, 2, 1]);
  assert.deepEqual([...e.wts], [200, 55, 255]);
  // the same map sent dense decodes to the same edges
  const dense = decodeEdges({ n_heads: 1, n: 3, encoding: "dense",
    weights: b64([200, 0, 55, 0, 0, 0, 0, 255, 0]) });
  assert.deepEqual(dense, e);
});

// a complete views payload of 1 layer, 1 head, 2 tokens (every key the contract requires)
const viewsPayload = (extra) => ({
  view: "views", version: VIEWS_VERSION, n_layers: 1, n_heads: 1, n: 2, labels: ["a", "b"],
  segments: [0, 0], special: [0, 0], is_pair: false, scale: 255, size: 2, pool: "none",
  thumbs: b64([255, 0, 0, 255]), encoding: "dense", top_k: null,
  layers: [{ weights: b64([255, 0, 0, 255]) }], digest: "0123456789abcdef", ...extra,
});

test("a payload of the version drawn passes; another version is named, with its maker", () => {
  assert.equal(VIEWS_VERSION, 2);
  assert.equal(PAYLOAD_VERSION, 1);
  assert.equal(checkPayload(viewsPayload(), "views"), null);
  const old = checkPayload(viewsPayload({ version: 1 }), "views");
  assert.match(old, /version 2 of analysis\.attention\.views\.views_payload, got 1/);
  assert.match(checkPayload(viewsPayload({ version: undefined }), "views"), /got null/);
  assert.match(checkPayload(viewsPayload(), "head"),
    /needs a payload from analysis\.attention\.views\.head_view_payload \(got view "views"\)/);
  assert.equal(checkPayload(null, "views"), "The view received no data.");
});

test("a payload missing keys or with labels of another length is refused", () => {
  assert.match(checkPayload(viewsPayload({ labels: undefined, encoding: null }), "views"),
    /lacks labels, encoding\.$/);
  assert.equal(checkPayload(viewsPayload({ labels: ["a"] }), "views"),
    "The payload of analysis.attention.views.views_payload has 1 labels for 2 tokens.");
  const model = { view: "model", version: PAYLOAD_VERSION, n_layers: 2, n_heads: 3, n: 4,
    size: 4, pool: "none", scale: 255, thumbs: "" };
  assert.equal(checkPayload(model, "model"), null);
  assert.match(checkPayload({ ...model, scale: 100 }, "model"), /has scale 100, not 255\.$/);
});

test("pins and heads the page asks for are checked", () => {
  const labels = ["[CLS]", "food", "[SEP]"];
  assert.deepEqual(validPin({ side: "to", index: 1 }, labels), { side: "to", index: 1, token: "food" });
  for (const bad of [{ side: "up", index: 1 }, { side: "from", index: 3 }, { side: "from", index: -1 },
    { side: "from", index: 1.5 }, null]) assert.equal(validPin(bad, labels), null);
  assert.deepEqual(headList(headSet([5, 2, 99, -1, "3"], 12)), [2, 5]);
  assert.deepEqual(headList(headSet([99], 3)), [0, 1, 2]); // none valid: every head
  assert.deepEqual(headList(headSet(null, 2)), [0, 1]);
});
