// The one-layer head view component of the other pages (aspect heads, syntax):
// ui/common/attention/views.py head_view, entry headViewMain (the default export).

import { hEl, showProblem, viewState } from "./dom.js";
import { mountHeadView } from "./head_view.js";
import { checkPayload, decodeEdges, headSet, validPin } from "./payload.js";
import { headViewState, unsent } from "./report.js";

// Single-layer head view component: data.view === "head".
export function headViewMain(component) {
  const { data, parentElement, setStateValue } = component;
  const problem = checkPayload(data, "head");
  showProblem(parentElement, problem);
  if (problem) return;
  const H = data.n_heads;
  const labels = data.labels;
  const ui = data.ui || {};

  const st = viewState(parentElement, () => ({
    visible: null, pinned: null, segment: "All", sig: null, initHeads: undefined,
    sent: {}, timer: null,
  }));
  const sig = JSON.stringify([H, labels]);
  if (st.sig !== sig) {
    st.pinned = null; // other tokens: a pinned index would point elsewhere
    st.initPin = undefined; // ... and a pin asked for by the page applies to the new tokens
    if (st.nHeads !== H) st.visible = null;
    st.nHeads = H;
    st.sig = sig;
  }
  const initPin = JSON.stringify(ui.pin ?? null);
  if (st.initPin !== initPin) {
    st.pinned = validPin(ui.pin, labels);
    st.initPin = initPin;
  }
  const initHeads = JSON.stringify(ui.heads ?? null);
  if (st.initHeads !== initHeads) {
    st.visible = headSet(ui.heads, H);
    st.initHeads = initHeads;
  }
  if (!st.visible) st.visible = new Set([...Array(H).keys()]);
  if (!data.is_pair) st.segment = "All";
  let root = parentElement.querySelector(".av-root");
  if (!root) {
    root = hEl("div", { class: "av-root av-head" });
    parentElement.appendChild(root);
  }
  const handle = mountHeadView(root, data, decodeEdges(data), st, {
    // State goes back to Python only after the user changed something (each change reruns
    // the page); the first render records the baseline.
    changed(initial) {
      const next = headViewState(st);
      if (initial) {
        for (const [k, v] of Object.entries(next)) {
          if (st.sent[k] === undefined) st.sent[k] = JSON.stringify(v);
        }
      }
      clearTimeout(st.timer);
      st.timer = setTimeout(() => {
        for (const [k, v] of unsent(next, st.sent)) { st.sent[k] = JSON.stringify(v); setStateValue(k, v); }
      }, initial ? 0 : 300);
    },
  });
  handle.update(true);
  return handle.cleanup;
}

export default headViewMain;
