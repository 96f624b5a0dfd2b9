// The state the component reports and the page's asks it applies (report.js): the messages
// ui/attention/component.py reduce_report receives.
import assert from "node:assert/strict";
import { test } from "node:test";

import { STATE_KEYS } from "../../ui/common/attention/frontend/constants.js";
import {
  applyAsk, componentState, headViewState, pageAsks, remember, reportMessage, unsent,
} from "../../ui/common/attention/frontend/report.js";

const H = 12;
const every = () => new Set([...Array(H).keys()]);
const fresh = () => ({ view: "head", layer: 0, visible: every(), pinned: null, segment: "All" });

test("the state: every head is null, a pin loses its token, keys in STATE_KEYS order", () => {
  const st = fresh();
  assert.deepEqual(componentState(st, H),
    { view: "head", layer: 0, heads: null, pin: null, segment: "All" });
  Object.assign(st, { layer: 4, visible: new Set([11, 0, 2]), segment: "A->B",
    pinned: { side: "to", index: 3, token: "food" } });
  const state = componentState(st, H);
  assert.deepEqual(state, { view: "head", layer: 4, heads: [0, 2, 11],
    pin: { side: "to", index: 3 }, segment: "A->B" });
  assert.deepEqual(Object.keys(state), STATE_KEYS);
});

test("a message lists the keys the user changed; nothing changed, no message", () => {
  const st = fresh();
  const known = {};
  remember(componentState(st, H), known);
  assert.equal(reportMessage(componentState(st, H), known), null);
  st.layer = 3;
  st.visible = new Set([4]);
  assert.deepEqual(reportMessage(componentState(st, H), known), {
    view: "head", layer: 3, heads: [4], pin: null, segment: "All", changed: ["layer", "heads"] });
  remember(componentState(st, H), known);
  assert.equal(reportMessage(componentState(st, H), known), null);
});

test("the page's asks apply once; the echo of a state the view sent does not", () => {
  const applied = {}, sent = {};
  const ui = { view: "head", layer: 1, heads: null, pin: null, segment: "All" };
  assert.deepEqual(pageAsks(ui, applied, sent), { fromPage: STATE_KEYS, apply: STATE_KEYS });
  assert.deepEqual(pageAsks(ui, applied, sent), { fromPage: [], apply: [] });
  // the view sent layer 4; the page's next run asks for it: known, not applied again
  sent.layer = JSON.stringify(4);
  assert.deepEqual(pageAsks({ ...ui, layer: 4 }, applied, sent), { fromPage: ["layer"], apply: [] });
  assert.deepEqual(pageAsks({ ...ui, layer: 4, view: "model" }, applied, sent),
    { fromPage: ["view"], apply: ["view"] });
});

test("asks the component could not have sent fall back or are ignored", () => {
  const st = fresh();
  const dims = { L: 6, H, labels: ["a", "b", "c"] };
  for (const [k, v] of [["view", "nope"], ["layer", 6], ["layer", -1], ["layer", 1.5]]) applyAsk(st, k, v, dims);
  assert.equal(st.view, "head");
  assert.equal(st.layer, 0);
  applyAsk(st, "layer", 5, dims);
  applyAsk(st, "view", "heatmap", dims);
  applyAsk(st, "segment", "sideways", dims);
  applyAsk(st, "heads", [40], dims);
  applyAsk(st, "pin", { side: "to", index: 999 }, dims);
  assert.deepEqual(componentState(st, H),
    { view: "heatmap", layer: 5, heads: null, pin: null, segment: "All" });
  applyAsk(st, "pin", { side: "from", index: 2 }, dims);
  assert.deepEqual(st.pinned, { side: "from", index: 2, token: "c" });
});

test("the one-layer head view sends only the values not sent yet", () => {
  const st = { visible: new Set([3, 1]), pinned: { side: "from", index: 0, token: "x" }, segment: "B->A" };
  const next = headViewState(st);
  assert.deepEqual(next, { heads: [1, 3], pinned: { side: "from", index: 0, token: "x" }, segment: "B->A" });
  const sent = { heads: JSON.stringify([1, 3]), segment: JSON.stringify("All") };
  assert.deepEqual(unsent(next, sent), [["pinned", { side: "from", index: 0, token: "x" }],
    ["segment", "B->A"]]);
});
