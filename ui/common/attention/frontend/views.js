// The Attention page's one component: head view, model view and (long inputs) the canvas
// heatmap, with EVERY layer in the payload (analysis.attention.views.views_payload), so the
// layer, the heads shown, the segment filter, the pinned token and the open view change here,
// without a server round trip. The state goes back to Python once the user pauses (one key,
// "state"), so the page's widgets and the URL follow without recomputing anything.
// Entry of ui/common/attention/views.py attention_views: viewsMain (the default export).

import { hEl, showProblem, viewState, viewTiming } from "./dom.js";
import { mountHeadView } from "./head_view.js";
import { mountHeatmap } from "./heatmap.js";
import { mountModelView } from "./model_view.js";
import { checkPayload, decodeEdges, headList } from "./payload.js";
import { applyAsk, componentState, pageAsks, remember, reportMessage } from "./report.js";

const SEND_DELAY = 350; // ms of quiet before the state goes back to Python (one rerun)

export function viewsMain(component) {
  const t0 = performance.now();
  const { data, parentElement, setStateValue } = component;
  const problem = checkPayload(data, "views");
  showProblem(parentElement, problem);
  if (problem) return;
  const L = data.n_layers, H = data.n_heads, labels = data.labels;
  const ui = data.ui || {};
  const st = viewState(parentElement, () => ({
    view: "head", layer: 0, visible: null, pinned: null, segment: "All",
    applied: {}, sent: {}, timer: null, digest: null, tokens: null, edges: [], mounted: null,
  }));
  const tokens = JSON.stringify(labels);
  if (st.tokens !== tokens) { // other tokens: a pinned index would point elsewhere
    st.pinned = null;
    st.tokens = tokens;
  }
  if (st.digest !== data.digest) {
    st.edges = [];
    st.digest = data.digest;
    st.mounted = null;
  }
  if (!st.visible || st.visibleOf !== H) { st.visible = new Set([...Array(H).keys()]); st.visibleOf = H; }

  const current = () => componentState(st, H);

  // What the page asks for applies when it changed since the last run and is not just the
  // echo of a state this view sent itself (the user may have moved on meanwhile).
  const { fromPage, apply } = pageAsks(ui, st.applied, st.sent);
  for (const k of apply) applyAsk(st, k, ui[k] ?? null, { L, H, labels });
  if (!data.is_pair) st.segment = "All";
  if (st.view === "heatmap" && !data.heatmap) st.view = "head";
  if (st.view !== "heatmap" && !data.layers) st.view = "heatmap";
  st.known = st.known || {}; // what the page knows of each key: only other keys are reported
  for (const k of fromPage) st.known[k] = JSON.stringify(current()[k]);

  let root = parentElement.querySelector(".av-views");
  if (!root) {
    root = hEl("div", { class: "av-views" });
    parentElement.appendChild(root);
  }

  function edgesFor(l) {
    if (!st.edges[l]) {
      st.edges[l] = decodeEdges({ n_heads: H, n: data.n, encoding: data.encoding, ...data.layers[l] });
    }
    return st.edges[l];
  }

  let pageRun = true; // true while the page's own data is applied (this call)
  function changed(initial) {
    const next = current();
    root.setAttribute("data-view", st.view);
    if (initial) {
      // the state as the page set it is what the page knows; a user change waiting to be
      // sent stays pending
      if (pageRun && !st.pending) {
        remember(next, st.sent, st.known);
      }
      return;
    }
    st.pending = true;
    clearTimeout(st.timer);
    st.timer = setTimeout(() => {
      st.pending = false;
      const now = current();
      // only what the user changed here: a widget the page changed meanwhile keeps its value
      const message = reportMessage(now, st.known);
      if (!message) return;
      remember(now, st.sent, st.known);
      setStateValue("state", message);
    }, SEND_DELAY);
  }

  function pickLayer(l) {
    const t = performance.now();
    st.layer = l;
    st.mounted.layer = l;
    st.mounted.handle.setLayer(l, edgesFor(l));
    viewTiming("layer-switch-js", performance.now() - t, { n: data.n, layer: l + 1 });
    requestAnimationFrame(() => setTimeout(() =>
      viewTiming("layer-switch", performance.now() - t, { n: data.n, layer: l + 1 }), 0));
  }

  function mount() {
    const kind = st.view;
    const hm = data.heatmap;
    const sig = `${kind}|${data.digest}|${hm ? [hm.layer, hm.head, hm.n, hm.max].join(",") : ""}`;
    if (st.mounted && st.mounted.sig === sig && root.firstChild) {
      // same data: only the state may differ (e.g. the page's Layer widget changed)
      if (kind === "head") {
        if (st.mounted.layer !== st.layer) st.mounted.handle.setLayer(st.layer, edgesFor(st.layer), true);
        else st.mounted.handle.update(true);
        st.mounted.layer = st.layer;
      } else if (kind === "model") {
        st.mounted.handle.mark();
      }
      changed(true);
      return;
    }
    if (st.mounted && st.mounted.handle && st.mounted.handle.cleanup) st.mounted.handle.cleanup();
    const box = hEl("div", { class: `av-root av-${kind}` });
    root.replaceChildren(box);
    let handle;
    if (kind === "head") {
      const layerData = {
        n_heads: H, n: data.n, labels, segments: data.segments, special: data.special,
        is_pair: data.is_pair, layer: st.layer, top_k: data.top_k, threshold: 0,
        encoding: data.encoding, highlight: [],
      };
      handle = mountHeadView(box, layerData, edgesFor(st.layer), st, {
        changed,
        layers: { count: L, pick: (l) => pickLayer(l) },
      });
      handle.update(true);
      st.mounted = { sig, handle, layer: st.layer };
    } else if (kind === "model") {
      const sel = { selected: [st.layer, headList(st.visible).length === 1 ? headList(st.visible)[0] : -1] };
      handle = mountModelView(box, data, sel, (l, h) => {
        const t = performance.now();
        st.view = "head";
        st.layer = l;
        st.visible = new Set([h]);
        st.pinned = null;
        mount();
        changed(false);
        viewTiming("model-open", performance.now() - t, { n: data.n });
      });
      st.mounted = { sig, handle };
      changed(true);
    } else {
      handle = mountHeatmap(box, labels, data.heatmap, t0);
      st.mounted = { sig, handle };
      changed(true);
    }
    root.setAttribute("data-view", st.view);
    viewTiming(`mount-${kind}`, performance.now() - t0, { n: data.n });
  }

  mount();
  pageRun = false;
  return () => { if (st.mounted && st.mounted.handle && st.mounted.handle.cleanup) st.mounted.handle.cleanup(); };
}

export default viewsMain;
