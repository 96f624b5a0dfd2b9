// Helper for tests/test_attention_component.py (not a test file itself): reads a views payload
// (JSON on stdin), prints {problem, layers: [{rowStart, keys, wts}]} as the component decodes it.
import { checkPayload, decodeEdges } from "../../ui/common/attention/frontend/payload.js";

let text = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { text += chunk; });
process.stdin.on("end", () => {
  const data = JSON.parse(text);
  const problem = checkPayload(data, "views");
  const layers = problem ? [] : data.layers.map((layer) => {
    const e = decodeEdges({ n_heads: data.n_heads, n: data.n, encoding: data.encoding, ...layer });
    return { rowStart: [...e.rowStart], keys: [...e.keys], wts: [...e.wts] };
  });
  process.stdout.write(JSON.stringify({ problem, layers }));
});
