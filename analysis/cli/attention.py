"""``attention``: write one input's attention maps to an .npz file."""

from __future__ import annotations

import numpy as np

from analysis.cli.options import out_file
from analysis.cli.scale import placed
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
    # lazy: loads the study only when its command runs (fast `python -m analysis --help`)
    from analysis.attention.study import STUDY, Inputs

    loaded = load_model(args.model)
    result = STUDY.run(Inputs(loaded.spec, args.text, args.pair), models=loaded,
                       placement=placed(args))
    np.savez_compressed(args.out, **result.arrays())  # the result's JSON keys, as arrays
    for notice in result.encoding.notices:
        print(f"note: {notice}")
    L, H, T, _ = result.attentions.shape
    print(f"wrote {args.out}: {L} layers x {H} heads x {T} tokens")
    return 0
