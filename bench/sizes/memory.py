"""Peak memory of the largest single steps at BERT-large and 512 tokens (issue 30's 8 GB
target), without running the whole studies (each would take hours on 2 CPU cores): the
attention first view, ``--ig-steps`` steps of integrated gradients through the page's call
(its batch is one step at this size: ``gradients._internal_batch``), and value zeroing of
``--vz-layers`` layers (every block of zeroed copies of those layers, the blocks sized by
``zeroing.BUDGET_BYTES``); with ``--corpus N``, corpus statistics and Drift (the encoder and
its classifier) on N texts of ``--tokens`` tokens each. Peak RSS as in sizes/run.py
(``inputs.Peak``).

    nice python -m bench.sizes.memory --size bert-large
"""

from __future__ import annotations

import os

from bench import harness
from bench.sizes import inputs as bs
from bench.sizes.run import SIZES


def main(argv=None) -> int:
    p = harness.parser(__doc__)
    p.add_argument("--size", default="bert-large", choices=SIZES)
    p.add_argument("--tokens", type=int, default=512)
    p.add_argument("--ig-steps", type=int, default=2)
    p.add_argument("--vz-layers", type=int, default=1)
    p.add_argument("--only", nargs="*", default=None, help="step names to run (their first "
                   "words: 'attention first view', 'corpus statistics', 'Drift', ...)")
    p.add_argument("--corpus", type=int, default=0, help="texts of --tokens tokens for corpus "
                   "statistics and Drift (0: skip them)")
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    run = harness.start(args)
    import analysis.attention
    import analysis.attention.views as views
    from analysis.attribution import attribute, load_for_attribution
    from analysis.attribution.mixing import layer_inputs
    from analysis.attribution.zeroing import block_size, value_zeroing_layer
    from analysis.core.forward import forward
    from analysis.core.hooks import layer_parts
    from analysis.core.maps import level_view

    base, clf = bs.spec_of(args.size, None)
    loaded = load_for_attribution(clf)
    text, pair = bs.pair_of_length(loaded.tokenizer, args.tokens)
    n = len(loaded.tokenizer(text, pair)["input_ids"])
    print(f"{args.size} classifier loaded: RSS {bs.rss_bytes() / 2**20:,.0f} MiB, {n} tokens")

    def first_view():
        res = analysis.attention.attention_for(loaded, text, pair)
        labels, maps, segments, special = level_view(res, "token", False)
        return views.views_payload(labels, maps, segments, special, is_pair=True)

    def ig():
        return attribute(loaded, text, pair, methods=["integrated_gradients"],
                         steps=args.ig_steps)

    def vz():
        from analysis.core.encoding import encode

        enc = encode(loaded.tokenizer, text, pair, max_length=loaded.max_length)
        fw = forward(loaded.model, loaded.tokenizer, [enc], hidden_states=True,
                     capture=("value_vectors",))
        lis = layer_inputs(fw, layer_parts(loaded.model))
        for layer in range(args.vz_layers):
            value_zeroing_layer(loaded.model, layer, lis[layer],
                                fw.hidden_states[layer + 1][0, :n].float())

    def long_texts():
        from datasets import Dataset

        one = loaded.tokenizer.convert_tokens_to_string(
            loaded.tokenizer.tokenize(f"{text} {pair}")[:args.tokens - 2])
        return Dataset.from_dict({"text": [one] * args.corpus})

    def noop():
        from analysis.core.models import load_model
        from analysis.noop import corpus_stats

        return corpus_stats(load_model(base), long_texts(), batch_size=64, norms=False)

    def drift():
        from analysis.drift import compare_models, load_pair
        from analysis.core.encoding import encode_dataset

        before, after = load_pair(base, clf)
        corpus = encode_dataset(before.tokenizer, long_texts(), max_length=before.max_length)
        return compare_models(before, after, corpus, batch_size=32)

    block = block_size(n, loaded.model.config)
    steps = [("attention first view", first_view),
             (f"integrated gradients, {args.ig_steps} steps", ig),
             (f"value zeroing, {args.vz_layers} layer(s), blocks of {block} copies", vz)]
    if args.corpus:
        steps += [(f"corpus statistics, {args.corpus} texts of {n} tokens", noop),
                  (f"Drift, {args.corpus} texts of {n} tokens, 2 models", drift)]
    steps = [st for st in steps if not args.only or st[0].split(",")[0] in args.only]
    for name, fn in steps:
        with bs.Peak() as pk:
            _, s = bs.timed(fn)
        print(f"| {args.size} | {n} | {name} | {s:.1f} s | {pk.peak / 2**20:,.0f} MiB | "
              f"{(pk.peak - pk.start) / 2**20:,.0f} MiB |", flush=True)
        run.row(name, size=args.size, tokens=n, seconds=s, peak_rss_mib=pk.peak / 2**20,
                rss_rise_mib=(pk.peak - pk.start) / 2**20)
    run.done()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
