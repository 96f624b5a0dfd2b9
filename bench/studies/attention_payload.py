"""Benchmark: bytes sent to the browser by our head view vs BertViz 1.4's head view.

BertViz is installed for this benchmark only (it is not in requirements.txt):

    pip install bertviz==1.4.1   # benchmark only; it keeps torch 2.13 (requires torch>=1.0)
    nice python -m bench.studies.attention_payload [--tokens 128] [--layer 3]

(If pip ever wants to replace torch, use ``pip install --no-deps bertviz==1.4.1`` and install
its other dependencies, IPython, boto3, requests and regex, yourself.)

Input: a real sentence pair from SemEval-2014 restaurants (``../shared/data``; a fixed review
text is used when that folder is absent) trimmed to exactly ``--tokens`` tokens, run through the
embedded default model. Measured in the same run on the same attention maps:

- baseline: ``bertviz.head_view(attention, tokens, sentence_b_start, html_action="return")``,
  the size of the HTML it returns (every layer and head as JSON floats, five times for the
  segment filters, plus its JavaScript);
- ours: ``payload_size(views_payload(...))``, what the Attention page sends (every layer and
  the thumbnails; dense when it fits 2 MB), and ``payload_size(head_view_payload(...))`` for
  one layer (the other pages' head view), dense (every weight, 8 bits) and with 5 strongest
  keys per query per head, and the model view's thumbnails of all layers.

Prints sizes and ratios (target: the head view payload <= 2% of BertViz's HTML).
"""

from __future__ import annotations

from bench import harness

DATA = harness.SEMEVAL
FALLBACK = (
    "The pasta was cooked perfectly and the sauce tasted fresh, but the waiter forgot our "
    "drinks twice and the bill took almost half an hour to arrive. The dining room is small "
    "and loud on weekends, although the decor is charming and the prices are fair. I would "
    "come back for the food alone, since the kitchen clearly cares about ingredients, yet the "
    "staff seemed overwhelmed and nobody checked on our table after the mains were served, "
    "which spoiled an otherwise lovely evening with friends from out of town."
)


def review_sentences(limit: int = 40) -> list[str]:
    if not DATA.is_file():
        return [s.strip() + "." for s in FALLBACK.split(".") if s.strip()]
    from analysis.core.corpus import read_corpus

    return list(read_corpus(DATA, max_examples=limit)["text"])


def pair_of_length(tokenizer, sentences: list[str], n: int):
    """(text A, text B) of consecutive review sentences whose pair encoding has n tokens."""
    from analysis.core.encoding import encode

    for start in range(len(sentences) - 1):
        a_words: list[str] = []
        k = start
        while (k < len(sentences)
               and encode(tokenizer, " ".join(a_words or ["x"])).n_tokens < n // 2):
            a_words += sentences[k].split()
            k += 1
        b_words = " ".join(sentences[k:]).split()
        for m in range(len(b_words), 0, -1):
            enc = encode(tokenizer, " ".join(a_words), " ".join(b_words[:m]))
            if enc.n_tokens == n:
                return enc
            if enc.n_tokens < n:
                break
    raise SystemExit(f"could not build a pair of exactly {n} tokens")


def human(nbytes: int) -> str:
    for unit in ("B", "KB", "MB"):
        if nbytes < 1024 or unit == "MB":
            return f"{nbytes:,.0f} {unit}" if unit == "B" else f"{nbytes:,.1f} {unit}"
        nbytes /= 1024
    return str(nbytes)


def main(argv=None) -> int:
    p = harness.parser(__doc__)
    p.add_argument("--tokens", type=int, default=128)
    p.add_argument("--layer", type=int, default=3, help="1-indexed layer for our head view")
    p.add_argument("--top-k", type=int, default=5, help="the page's long-input setting")
    args = p.parse_args(argv)
    run = harness.start(args)

    from analysis.attention.views import head_view_payload, model_view_payload, views_payload
    from analysis.core.forward import forward
    from analysis.core.models import load_model
    from bench.references.attention import full_json_size, payload_size

    loaded = load_model("default")
    enc = pair_of_length(loaded.tokenizer, review_sentences(), args.tokens)
    out = forward(loaded.model, loaded.tokenizer, [enc])
    att = out.maps(0)
    l0 = args.layer - 1
    b_start = int(enc.segments.argmax())
    print(f"model: {loaded.name} ({loaded.n_layers} layers x {loaded.n_heads} heads)")
    print(f"input: sentence pair, {enc.n_tokens} tokens (B starts at token {b_start})")
    print(f"  A: {enc.text[:90]}...")
    print(f"  B: {enc.pair[:90]}...")

    try:
        from bertviz import head_view as bertviz_head_view
    except ImportError:
        bertviz_bytes = None
        print("\nBertViz is not installed: pip install bertviz==1.4.1 "
              "(baseline below is the full float JSON of all layers instead)")
    else:
        html = bertviz_head_view(list(out.attentions), enc.tokens, b_start, html_action="return")
        bertviz_bytes = len(html.data.encode("utf-8"))

    full = full_json_size(att, enc.tokens)
    dense = head_view_payload(enc.tokens, att[l0], enc.segments, enc.special, layer=l0,
                              is_pair=True)
    sparse = head_view_payload(enc.tokens, att[l0], enc.segments, enc.special, layer=l0,
                               is_pair=True, top_k=args.top_k)
    model = model_view_payload(att)
    every = views_payload(enc.tokens, att, enc.segments, enc.special, is_pair=True)
    baseline = bertviz_bytes if bertviz_bytes is not None else full
    name = "BertViz 1.4.1 head_view HTML" if bertviz_bytes is not None else "full float JSON"

    rows = [
        (name + " (baseline)", baseline),
        ("all layers as float JSON (reference)", full),
        (f"ours: head view, layer {args.layer}, dense 8-bit", payload_size(dense)),
        (f"ours: head view, layer {args.layer}, top-{args.top_k} keys", payload_size(sparse)),
        ("ours: model view, all layers, 32x32 thumbnails", payload_size(model)),
        (f"ours: Attention page, every layer ({every['encoding']}) + thumbnails",
         payload_size(every)),
    ]
    print()
    print(f"{'payload':<52}{'bytes':>14}{'size':>12}{'vs baseline':>13}")
    for label, nbytes in rows:
        print(f"{label:<52}{nbytes:>14,}{human(nbytes):>12}{nbytes / baseline:>12.2%}")
        run.row(label, bytes=nbytes, share_of_baseline=nbytes / baseline)
    ratio = payload_size(dense) / baseline
    print(f"\nhead view (dense) / {name}: {ratio:.2%} "
          f"({'meets' if ratio <= 0.02 else 'MISSES'} the 2% target); "
          f"{baseline / payload_size(dense):.0f}x smaller")
    run.done()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
