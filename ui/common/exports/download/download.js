// The download button (ui/common/exports/download.py). A click asks the server for the file with a
// fresh nonce (a trigger: the server makes the bytes then, in the button's own fragment run);
// the answer comes back in the component's data under that nonce and is saved here as a Blob.
// Nothing refers to a server-side file id, so a rerun of the page (which drops Streamlit's
// deferred file ids) cannot lose a click (nor a new mount of the element: the click's state is
// kept by the button's key): an answer is saved, a failure is said in words and
// the button stays to try again, a click nobody answered says so after WAIT_MS.

export const WAIT_MS = 60000;

// What to do with the data's answer, given the nonce this button waits for and the nonces
// already handled (a re-render sends the same data again: save once).
export function settle(pending, answer, handled) {
  if (!answer || typeof answer !== "object" || !answer.nonce) return { act: "none" };
  if (answer.nonce !== pending || handled.has(answer.nonce)) return { act: "none" };
  if (typeof answer.error === "string" && answer.error) return { act: "error", text: answer.error };
  if (typeof answer.b64 !== "string") return { act: "error", text: "" };
  return { act: "save" };
}

// The bytes of a base64 text.
export function bytesOf(b64) {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i += 1) out[i] = bin.charCodeAt(i);
  return out;
}

// A nonce no earlier click of this page used.
export function nonce() {
  const r = Math.random().toString(36).slice(2, 10);
  return `${Date.now().toString(36)}-${r}`;
}

// Each button's click state, by its key, outside the DOM: Streamlit may mount the element
// anew while the page reruns, and an answer must still find the click that waits for it.
const STORE = (globalThis.__dashboardDownloads ||= new Map());

export function entryFor(store, key) {
  if (!store.has(key)) store.set(key, { pending: null, handled: new Set(), timer: null,
                                        state: "", text: "", root: null });
  return store.get(key);
}

function show(entry) {
  const root = entry.root;
  if (!root || !root.isConnected) return;
  root.dataset.state = entry.state;
  root.querySelector(".dl-said").textContent = entry.text;
}

function save(root, entry, answer) {
  const blob = new Blob([bytesOf(answer.b64)], { type: entry.mime || "application/octet-stream" });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = entry.fileName;
  a.style.display = "none";
  (root.isConnected ? root : document.body).appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

function mount(parentElement, entry, setTriggerValue) {
  const root = document.createElement("div");
  root.className = "dl-root";
  root.setAttribute("data-testid", "downloadButton");
  const button = document.createElement("button");
  button.type = "button";
  button.className = "dl-button";
  const said = document.createElement("span");
  said.className = "dl-said";
  said.setAttribute("role", "status");
  said.setAttribute("data-testid", "dlStatus");
  root.append(button, said);
  parentElement.appendChild(root);
  button.addEventListener("click", () => {
    const n = nonce();
    Object.assign(entry, { pending: n, state: "waiting", text: entry.texts.waiting || "" });
    show(entry);
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => {
      if (entry.pending !== n) return;
      Object.assign(entry, { state: "late", text: entry.texts.late || "" });
      show(entry);
    }, entry.waitMs || WAIT_MS);
    setTriggerValue("ask", n);
  });
  return root;
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  const entry = entryFor(STORE, String(data.key));
  Object.assign(entry, { fileName: data.file_name, mime: data.mime, texts: data.texts || {},
                         waitMs: Number(data.wait_ms) > 0 ? Number(data.wait_ms) : WAIT_MS });
  const root = parentElement.querySelector(".dl-root") ||
    mount(parentElement, entry, setTriggerValue);
  entry.root = root;
  const button = root.querySelector(".dl-button");
  button.textContent = data.label;
  if (data.help) button.title = data.help;
  else button.removeAttribute("title");
  root.classList.toggle("dl-stretch", Boolean(data.stretch));
  const what = settle(entry.pending, data.answer, entry.handled);
  if (what.act !== "none") {
    entry.handled.add(data.answer.nonce);
    entry.pending = null;
    clearTimeout(entry.timer);
    if (what.act === "save") {
      save(root, entry, data.answer);
      Object.assign(entry, { state: "saved", text: "" });
    } else {
      const said = `${what.text || entry.texts.failed || ""} ${entry.texts.again || ""}`;
      Object.assign(entry, { state: "failed", text: said.trim() });
    }
  }
  show(entry);
}
