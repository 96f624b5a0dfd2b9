// The download button's decisions (ui/common/exports/download/download.js): an answer is saved once,
// only for the click that waits for it; an error is said; base64 decodes to the bytes.
import assert from "node:assert/strict";
import { test } from "node:test";

import { bytesOf, entryFor, nonce, settle } from "../../ui/common/exports/download/download.js";

test("an answer is saved once, for the click waiting for it only", () => {
  const handled = new Set();
  const ans = { nonce: "n1", b64: "YQ==" };
  assert.deepEqual(settle("n1", ans, handled), { act: "save" });
  assert.deepEqual(settle("n2", ans, handled), { act: "none" });   // an older click's answer
  assert.deepEqual(settle(null, ans, handled), { act: "none" });   // nobody waits
  handled.add("n1");
  assert.deepEqual(settle("n1", ans, handled), { act: "none" });   // a re-render: once only
  assert.deepEqual(settle("n1", null, new Set()), { act: "none" });
  assert.deepEqual(settle("n1", {}, new Set()), { act: "none" });
});

test("an error is said in the server's words; a malformed answer is an error too", () => {
  assert.deepEqual(settle("n", { nonce: "n", error: "The PNG could not be drawn." }, new Set()),
    { act: "error", text: "The PNG could not be drawn." });
  assert.deepEqual(settle("n", { nonce: "n" }, new Set()), { act: "error", text: "" });
});

test("base64 decodes to the bytes; nonces differ", () => {
  assert.deepEqual([...bytesOf("iVBORwA=")], [0x89, 0x50, 0x4e, 0x47, 0x00]);
  assert.deepEqual([...bytesOf("")], []);
  assert.notEqual(nonce(), nonce());
});

test("a button's click state is kept by its key (a new mount finds the click)", () => {
  const store = new Map();
  const first = entryFor(store, "report_html");
  first.pending = "n9";
  assert.equal(entryFor(store, "report_html").pending, "n9");
  assert.equal(entryFor(store, "report_zip").pending, null);
  assert.deepEqual(settle(entryFor(store, "report_html").pending, { nonce: "n9", b64: "" },
    first.handled), { act: "save" });
});
