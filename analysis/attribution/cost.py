"""How long the slow attribution methods will take on one input, from one forward's time, so
that a page can say so (and let the visitor choose) before starting them (issue 30).

Measured on the embedded model and BERT-base and BERT-large stand-ins (bench/README.md,
"Sizes"):

- value zeroing reruns, for each of the n tokens, the part of every layer after attention,
  whose share of a forward falls as the attention's ``n^2`` part grows with the tokens:
  ``0.95 n (126 / n) ** 0.3`` forwards (0.95 n at 126 tokens, 0.62 n at 512; measured
  0.75-1.27 n at 126 and 0.58-0.66 n at 512, every row within a fifth);
- integrated gradients runs its ``steps`` forwards and backwards (a backward is about twice a
  forward) plus Captum's and the prediction's extra forwards: about ``3.5 * steps + 2``
  forwards;
- the norms' and ALTI's per-layer work grows faster than the forward with the tokens (``n^2``
  terms per layer against the forward's mostly ``n``): ``k * (n / 126) ** e`` forwards with
  (k, e) = (3, 0.1) for ALTI (its L1 distances summed as they are made, issue 48: 2.7x the
  forward at 126 tokens and 3.0x at 512 at BERT-base, CPU seconds on one thread; it was 9.8x
  at 512 when they were formed), (1.4, 0.5) for ``norm_resln`` and (1, 0.5) for ``norm``
  (their Gram matrices: 1.4x and 2.8x, 1x and 2x; bench/README.md, "Attribution at 512
  tokens");
- raw attention costs one forward (the one the mixing methods share).

The estimate scales with the forward that was timed on this machine and input, so it follows
model size, token count, device and load.
"""

from __future__ import annotations
import time
from analysis.attribution.run import check_methods, encode_input
from analysis.core.forward import forward

SLOW_AFTER_SECONDS = 10.0  # longer than this: the page asks before starting
FORWARDS_PER_IG_STEP = 3.5
IG_EXTRA_FORWARDS = 2.0
GROWTH_TOKENS = 126
GROWING = {"alti": (3.0, 0.1), "norm_resln": (1.4, 0.5), "norm": (1.0, 0.5)}
VALUE_ZEROING = (0.95, 0.3)  # (k, e): k n (126 / n) ** e forwards


def forwards_needed(method: str, n_tokens: int, steps: int = 50) -> float:
    """How many forwards of the input ``method`` costs (about)."""
    if method == "value_zeroing":
        k, e = VALUE_ZEROING
        return k * n_tokens * (GROWTH_TOKENS / n_tokens) ** e
    if method == "integrated_gradients":
        return FORWARDS_PER_IG_STEP * steps + IG_EXTRA_FORWARDS
    if method in GROWING:
        k, e = GROWING[method]
        return max(1.0, k * (n_tokens / GROWTH_TOKENS) ** e)
    return 1.0


def estimate_seconds(methods, n_tokens: int, forward_seconds: float,
                     steps: int = 50) -> dict[str, float]:
    """{method: seconds} for one input of ``n_tokens`` whose forward took
    ``forward_seconds`` here."""
    if n_tokens < 1 or forward_seconds < 0:
        raise ValueError("n_tokens must be positive and forward_seconds not negative.")
    return {m: forwards_needed(m, n_tokens, steps) * forward_seconds for m in methods}


def slow_methods(estimates: dict[str, float], limit: float = SLOW_AFTER_SECONDS
                 ) -> dict[str, float]:
    """The methods whose estimate is over ``limit`` seconds (the page asks first)."""
    return {m: s for m, s in estimates.items() if s > limit}


def duration_words(seconds: float) -> str:
    """'about 40 seconds', 'about 3 minutes', 'about 1.5 hours'."""
    if seconds < 90:
        return f"about {max(1, round(seconds)):d} seconds"
    if seconds < 90 * 60:
        return f"about {round(seconds / 60):d} minutes"
    return f"about {seconds / 3600:.1f} hours"


def time_forward(loaded, enc) -> float:
    """Seconds of one forward of the encoding ``enc`` on ``loaded`` (this machine, now)."""
    t0 = time.perf_counter()
    forward(loaded.model, loaded.tokenizer, [enc])
    return time.perf_counter() - t0


def estimate_input(loaded, text: str, pair: str | None = None, max_tokens: int = 512,
                   steps: int = 50) -> dict[str, float]:
    """{method: seconds} of every method the model allows on this input, from one timed
    forward; when that says some method is slow, from the faster of two (a first forward can
    carry one-time costs, and a busy moment should not hold a method back: the second costs
    at most a tenth of the method it may release). InputError (one line) for an input
    attribution refuses."""
    methods = check_methods(None, loaded)
    enc = encode_input(loaded, text, pair, max_tokens)
    seconds = time_forward(loaded, enc)
    est = estimate_seconds(methods, enc.n_tokens, seconds, steps)
    if slow_methods(est, SLOW_AFTER_SECONDS):
        seconds = min(seconds, time_forward(loaded, enc))
        est = estimate_seconds(methods, enc.n_tokens, seconds, steps)
    return est


# Faithfulness over a corpus (every method per example, then its words removed and the model
# rerun; leave-one-out) measured at 1.69-1.71x the time of integrated gradients alone on the
# same examples at three model sizes (bench/README.md: "faithfulness at RoBERTa-base (165
# pairs, 479 s, 1.71x of the IG-only floor)", BERT-large 1.70x and 1.69x)
FAITHFULNESS_OVER_IG = 1.7


def estimate_faithfulness(loaded, texts, pairs=None, max_tokens: int = 512,
                          steps: int = 50) -> float:
    """Seconds of a faithfulness run over ``texts`` (and ``pairs``) here, now: integrated
    gradients' forwards for each example (at one timed forward of the first, scaled by each
    example's tokens) times :data:`FAITHFULNESS_OVER_IG`. Said before the run starts (issue
    49: "Measure faithfulness" took 8.4 minutes without a word of how long)."""
    pairs = list(pairs) if pairs is not None else [None] * len(texts)
    encs = [encode_input(loaded, t, p, max_tokens) for t, p in zip(texts, pairs)]
    if not encs:
        return 0.0
    per_token = time_forward(loaded, encs[0]) / max(encs[0].n_tokens, 1)
    ig = forwards_needed("integrated_gradients", 1, steps)
    return FAITHFULNESS_OVER_IG * ig * per_token * sum(e.n_tokens for e in encs)


def methods_to_hold(slow: dict[str, float]) -> tuple[str, ...]:
    """What to leave out when ``slow`` are held back: gradient x input comes with integrated
    gradients (one Captum pass computes both), so it waits with it."""
    held = set(slow)
    if "integrated_gradients" in held:
        held.add("grad_input")
    return tuple(sorted(held))
