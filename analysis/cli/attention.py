"""``attention``: write one input's attention maps to an .npz file."""

from __future__ import annotations

import numpy as np

from analysis.attention import attention_for
from analysis.cli.options import out_file
from analysis.core.models import DEFAULT_SPEC, load_model


def register(sub) -> None:
    p = sub.add_parser(
        "attention", help="attention maps of one text or sentence pair -> .npz",
        description="Write attentions (float32 [layers, heads, tokens, tokens]) and tokens.",
    )
    p.add_argument("--text", required=True, help="the text (segment A)")
    p.add_argument("--pair", default=None, help="optional second text (segment B)")
    p.add_argument("--model", default=DEFAULT_SPEC,
                   help="'default' (embedded all-MiniLM-L6-v2), a Hugging Face id or a folder")
    p.add_argument("--out", required=True, type=out_file(".npz"), help="output .npz file")
    p.set_defaults(func=run)


def run(args) -> int:
    loaded = load_model(args.model)
    result = attention_for(loaded, args.text, args.pair)
    enc = result.encoding
    np.savez_compressed(
        args.out,
        attentions=result.attentions.astype(np.float32),
        tokens=np.array(enc.tokens),
        segments=enc.segments.astype(np.int8),
        special=enc.special,
        word_ids=np.array(enc.word_ids, dtype=np.int32),
        words=np.array(enc.words),
        model=np.array(loaded.spec),
    )
    for notice in enc.notices:
        print(f"note: {notice}")
    L, H, T, _ = result.attentions.shape
    print(f"wrote {args.out}: {L} layers x {H} heads x {T} tokens")
    return 0
