// The payload contract as the JavaScript reads it (payload_spec.js, generated from
// analysis/attention/payload_spec.py): every required key of every kind is refused when missing,
// keys needed only for sparse weights are refused only there, types and shapes are checked.
import assert from "node:assert/strict";
import { test } from "node:test";

import { checkPayload } from "../../ui/common/attention/frontend/payload.js";
import { MAKERS_MODULE, PAYLOADS } from "../../ui/common/attention/frontend/payload_spec.js";

const b64 = (bytes) => Buffer.from(bytes).toString("base64");
const w4 = b64([255, 0, 0, 255]); // a 1-head 2x2 map, 8-bit
const tokens = { n: 2, labels: ["[CLS]", "food"], segments: [0, 0], special: [1, 0], is_pair: false };
const PAYLOAD = {
  views: { view: "views", version: 2, n_layers: 1, n_heads: 1, ...tokens, scale: 255, size: 2,
    pool: "none", thumbs: w4, encoding: "dense", top_k: null, layers: [{ weights: w4 }],
    digest: "0123456789abcdef" },
  head: { view: "head", version: 1, layer: 0, n_heads: 1, ...tokens, top_k: null, threshold: 0,
    scale: 255, highlight: [1], encoding: "dense", weights: w4, n_edges: 2 },
  model: { view: "model", version: 1, n_layers: 1, n_heads: 1, n: 2, size: 2, pool: "none",
    scale: 255, thumbs: w4 },
};
const without = (obj, key) => Object.fromEntries(Object.entries(obj).filter(([k]) => k !== key));
const where = (kind) => `${MAKERS_MODULE}.${PAYLOADS[kind].maker}`;

test("the contract names the three kinds, their versions and makers", () => {
  assert.deepEqual(Object.keys(PAYLOADS), ["views", "head", "model"]);
  assert.deepEqual(Object.values(PAYLOADS).map((p) => [p.version, p.maker]),
    [[2, "views_payload"], [1, "head_view_payload"], [1, "model_view_payload"]]);
  const required = PAYLOADS.views.fields.filter((f) => f.required).map((f) => f.name);
  assert.equal(required.length, 17);
  assert.ok(required.includes("layers") && required.includes("digest") && !required.includes("heatmap"));
});

test("a complete payload of each kind passes; without any one required key it is refused", () => {
  for (const [kind, payload] of Object.entries(PAYLOADS)) {
    assert.equal(checkPayload(PAYLOAD[kind], kind), null, kind);
    const required = payload.fields.filter((f) => f.required).map((f) => f.name);
    assert.deepEqual(Object.keys(PAYLOAD[kind]).sort(), required.slice().sort(), kind);
    for (const key of required.filter((k) => k !== "view" && k !== "version")) {
      assert.equal(checkPayload(without(PAYLOAD[kind], key), kind),
        `The payload of ${where(kind)} lacks ${key}.`, `${kind} without ${key}`);
    }
    assert.match(checkPayload(without(PAYLOAD[kind], "view"), kind), /needs a payload from/);
    assert.match(checkPayload(without(PAYLOAD[kind], "version"), kind), /got null: reload the page\.$/);
  }
});

test("null is a value only where the contract says so", () => {
  assert.equal(checkPayload({ ...PAYLOAD.views, top_k: null }, "views"), null);
  assert.match(checkPayload({ ...PAYLOAD.views, digest: null }, "views"), /lacks digest\.$/);
});

test("a sparse payload needs its counts and keys; a dense one does not", () => {
  const u16 = (values) => b64(new Uint8Array(new Uint16Array(values).buffer));
  const layer = { counts: u16([1, 1]), keys: u16([0, 1]), weights: b64([255, 255]), n_edges: 2 };
  const sparse = { ...PAYLOAD.views, encoding: "sparse", top_k: 1, layers: [layer] };
  assert.equal(checkPayload(sparse, "views"), null);
  assert.equal(checkPayload({ ...sparse, layers: [without(layer, "keys")] }, "views"),
    `The payload of ${where("views")} lacks layers[0].keys.`);
  const head = { ...PAYLOAD.head, encoding: "sparse", counts: layer.counts, keys: layer.keys };
  assert.equal(checkPayload(head, "head"), null);
  assert.equal(checkPayload(without(without(head, "keys"), "counts"), "head"),
    `The payload of ${where("head")} lacks counts, keys.`);
});

test("types, choices, lengths and nested objects are checked", () => {
  const bad = (extra, kind = "views") => checkPayload({ ...PAYLOAD[kind], ...extra }, kind);
  const of = `The payload of ${where("views")} has`;
  assert.equal(bad({ n: "2" }), `${of} n of another type than int.`);
  assert.equal(bad({ is_pair: 1 }), `${of} is_pair of another type than bool.`);
  assert.equal(bad({ segments: [0, 2] }), `${of} segments 2, not 0, 1.`);
  assert.equal(bad({ encoding: "zip" }), `${of} encoding "zip", not "dense", "sparse".`);
  assert.equal(bad({ labels: ["a", 3] }), `${of} an item of labels of another type than string.`);
  assert.equal(bad({ layers: [] }), `${of} 0 layers for 1 layers.`);
  assert.equal(bad({ thumbs: "abc" }), `${of} thumbs of another type than base64.`);
  assert.equal(bad({ heatmap: { layer: 0, head: 0, n: 2, max: 0.5, weights: w4 } }), null);
  assert.equal(bad({ heatmap: { layer: 0, head: 0, n: 2, weights: w4 } }),
    `The payload of ${where("views")} lacks heatmap.max.`);
  assert.equal(bad({ layers: [5] }), `${of} layers[0] of another type than object.`);
});

test("a views payload may leave out layers and thumbnails only beside a heatmap", () => {
  const heatmap = { layer: 0, head: 0, n: 2, max: 0.5, weights: w4 };
  const small = without(without(PAYLOAD.views, "layers"), "thumbs");
  assert.equal(checkPayload({ ...small, heatmap }, "views"), null);
  assert.equal(checkPayload(small, "views"), `The payload of ${where("views")} lacks thumbs, layers.`);
  assert.equal(checkPayload({ ...small, heatmap: null }, "views"),
    `The payload of ${where("views")} lacks thumbs, layers.`);
});
