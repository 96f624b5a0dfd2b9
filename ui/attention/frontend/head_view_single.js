// The one-layer head view component of the other pages (aspect heads, syntax), and the
// page-asked state helpers shared with views.js. Requires common.js and head_view.js.

// Single-layer head view component (aspects, syntax pages): data.view === "head".
function headViewMain(component) {
  const { data, parentElement, setStateValue } = component;
  if (!data || data.view !== "head") return;
  const H = data.n_heads, n = data.n;
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
      const next = {
        heads: headList(st.visible),
        pinned: st.pinned ? { side: st.pinned.side, index: st.pinned.index, token: st.pinned.token } : null,
        segment: st.segment,
      };
      if (initial) {
        for (const [k, v] of Object.entries(next)) {
          if (st.sent[k] === undefined) st.sent[k] = JSON.stringify(v);
        }
      }
      clearTimeout(st.timer);
      st.timer = setTimeout(() => {
        for (const [k, v] of Object.entries(next)) {
          const enc = JSON.stringify(v);
          if (st.sent[k] !== enc) { st.sent[k] = enc; setStateValue(k, v); }
        }
      }, initial ? 0 : 300);
    },
  });
  handle.update(true);
  return handle.cleanup;
}

// A pin asked for by the page: {side, index} -> {side, index, token}, or null when invalid.
function validPin(p, labels) {
  const ok = p && (p.side === "from" || p.side === "to") && Number.isInteger(p.index) &&
    p.index >= 0 && p.index < labels.length;
  return ok ? { side: p.side, index: p.index, token: String(labels[p.index]) } : null;
}

// Heads asked for by the page (0-indexed), invalid ones dropped; none valid: every head.
function headSet(heads, H) {
  const wanted = Array.isArray(heads) ? heads.filter((h) => Number.isInteger(h) && h >= 0 && h < H) : [];
  return new Set(wanted.length ? wanted : [...Array(H).keys()]);
}
