// Helper for the Python tests of the payload contract (not a test file itself): reads
// [[kind, payload], ...] (JSON on stdin), prints the JavaScript's checkPayload of each (null: ok).
import { checkPayload } from "../../ui/common/attention/frontend/payload.js";

let text = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { text += chunk; });
process.stdin.on("end", () => {
  const cases = JSON.parse(text);
  process.stdout.write(JSON.stringify(cases.map(([kind, payload]) => checkPayload(payload, kind))));
});
