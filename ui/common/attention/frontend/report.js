// The state the components report to Python and the page's asks they apply: the JavaScript
// half of the reducer in ui/attention/component.py (no DOM: Node tests import it).

import { SEGMENTS, STATE_KEYS, VIEW_KINDS } from "./constants.js";
import { headList, headSet, validPin } from "./payload.js";

const enc = (v) => JSON.stringify(v ?? null);

// The Attention component's state: {view, layer, heads (0-indexed, null: every head),
// pin ({side, index} or null), segment}, keys in STATE_KEYS order.
export function componentState(st, H) {
  const heads = headList(st.visible);
  return {
    view: st.view, layer: st.layer, heads: heads.length === H ? null : heads,
    pin: st.pinned ? { side: st.pinned.side, index: st.pinned.index } : null,
    segment: st.segment,
  };
}

// What the page asks for (`ui`) applies when it changed since the last run (`applied`) and is
// not just the echo of a state this view sent itself (`sent`). Updates `applied`; returns the
// keys the page changed (fromPage) and those to apply (apply).
export function pageAsks(ui, applied, sent) {
  const fromPage = [], apply = [];
  for (const k of STATE_KEYS) {
    const v = enc(ui && ui[k]);
    if (applied[k] === v) continue;
    applied[k] = v;
    fromPage.push(k);
    if (sent[k] !== v) apply.push(k);
  }
  return { fromPage, apply };
}

// Apply the page's value of key `k` to the view state `st`; invalid values are ignored
// (view, layer) or fall back to the default (heads: all, pin: none, segment: All).
export function applyAsk(st, k, value, dims) {
  const { L, H, labels } = dims;
  if (k === "view") { if (VIEW_KINDS.includes(value)) st.view = value; }
  else if (k === "layer") { if (Number.isInteger(value) && value >= 0 && value < L) st.layer = value; }
  else if (k === "heads") st.visible = headSet(value, H);
  else if (k === "pin") st.pinned = validPin(value, labels);
  else if (k === "segment") st.segment = SEGMENTS.includes(value) ? value : "All";
}

// Record `now` as known (and sent): later messages report only keys that differ from it.
export function remember(now, ...records) {
  for (const [k, v] of Object.entries(now)) for (const r of records) r[k] = enc(v);
}

// The message for Python once the user pauses: the state with the keys the user changed
// here (`changed`), or null when nothing differs from what the page knows (`known`).
export function reportMessage(now, known) {
  const changed = Object.keys(now).filter((k) => enc(now[k]) !== known[k]);
  return changed.length ? { ...now, changed } : null;
}

// The one-layer head view (other pages): its values and those not sent yet, as [key, value].
export function headViewState(st) {
  return {
    heads: headList(st.visible),
    pinned: st.pinned ? { side: st.pinned.side, index: st.pinned.index, token: st.pinned.token } : null,
    segment: st.segment,
  };
}

export function unsent(next, sent) {
  return Object.entries(next).filter(([k, v]) => sent[k] !== enc(v));
}
