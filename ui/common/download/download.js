// The download button (ui/common/download.py). A click asks the server for the file with a
// fresh nonce (a trigger: the server makes the bytes then, in the button's own fragment run);
// the answer comes back in the component's data under that nonce and is saved here as a Blob.
// Nothing refers to a server-side file id, so a rerun of the page (which drops Streamlit's
// deferred file ids) cannot lose a click: an answer is saved, a failure is said in words and
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

function save(root, answer) {
  const blob = new Blob([bytesOf(answer.b64)], { type: root.dl.mime || "application/octet-stream" });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = root.dl.fileName;
  a.style.display = "none";
  root.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

function mount(parentElement, setTriggerValue) {
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
  root.dl = { pending: null, handled: new Set(), timer: null, texts: {} };
  button.addEventListener("click", () => {
    const n = nonce();
    root.dl.pending = n;
    root.dataset.state = "waiting";
    said.textContent = root.dl.texts.waiting || "";
    clearTimeout(root.dl.timer);
    root.dl.timer = setTimeout(() => {
      if (root.dl.pending !== n) return;
      root.dataset.state = "late";
      said.textContent = root.dl.texts.late || "";
    }, WAIT_MS);
    setTriggerValue("ask", n);
  });
  return root;
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  const root = parentElement.querySelector(".dl-root") || mount(parentElement, setTriggerValue);
  const button = root.querySelector(".dl-button");
  const said = root.querySelector(".dl-said");
  button.textContent = data.label;
  if (data.help) button.title = data.help;
  else button.removeAttribute("title");
  root.dl.fileName = data.file_name;
  root.dl.mime = data.mime;
  root.dl.texts = data.texts || {};
  root.classList.toggle("dl-stretch", Boolean(data.stretch));
  const what = settle(root.dl.pending, data.answer, root.dl.handled);
  if (what.act === "none") return;
  root.dl.handled.add(data.answer.nonce);
  root.dl.pending = null;
  clearTimeout(root.dl.timer);
  if (what.act === "save") {
    save(root, data.answer);
    root.dataset.state = "saved";
    said.textContent = "";
  } else {
    root.dataset.state = "failed";
    said.textContent = `${what.text || root.dl.texts.failed || ""} ${root.dl.texts.again || ""}`.trim();
  }
}
