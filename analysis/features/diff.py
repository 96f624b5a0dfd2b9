"""Before and after: one crosscoder on the base model and the fine-tuned model at the same
layer over the same tokens, read as "what fine-tuning added" (docs/METHODS.md section 19;
the arithmetic in :mod:`.crosscoder`).

The summary: both models' held-out FVE, the dead share, the latents' norm shares (a
histogram and the count of each class), and on each side the 12 most model-specific live
latents (the largest share first: fine-tuned-only and base-only where there are, else those
leaning furthest that way) with their class, frequency, label, Latent Scaling ratios, top
contexts and, on the fine-tuned side in a classifier, their class effects (the latent's
fine-tuned decoder contribution switched off in the fine-tuned model).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Callable

import numpy as np

from analysis.core.errors import InputError
from analysis.features import browser
from analysis.features import cache as dcache
from analysis.features.job import collect_on
from analysis.features.crosscoder import (CLASSES, latent_scaling, norm_share, share_class,
                                          spurious, train_crosscoder)
from analysis.features.effects import class_effects, unavailable
from analysis.features.train import TrainSettings, default_epochs, default_m

Progress = Callable[[int, int], None]
SPECIFIC = 12  # model-specific latents shown per side


def same_tokens(base, after, encodings) -> None:
    """InputError unless the base model's tokenizer reads the inputs as the same pieces."""
    for e in encodings[:50]:
        ids = base.tokenizer(e.text, e.pair, truncation=True, max_length=e.n_tokens)["input_ids"]
        if list(ids) != list(e.input_ids):
            raise InputError(f"{base.name} and {after.name} split the text into different "
                             "pieces, so their activations cannot be paired token by token.")
    if base.model.config.hidden_size != after.model.config.hidden_size:
        raise InputError("The two models have different widths; a crosscoder pairs models of "
                         "one architecture.")


def fve(x: np.ndarray, recon_scaled: np.ndarray, scale: float) -> float:
    x = np.asarray(x, np.float64)
    err = ((x - recon_scaled / scale) ** 2).sum()
    var = ((x - x.mean(0)) ** 2).sum()
    return float(1 - err / var) if var > 0 else float("nan")


def diff(base, after, corpus, layer: int, settings: TrainSettings, x_after: np.ndarray,
         encodings, progress: Progress | None = None, stop=None, cache: str | None = None,
         run=None, max_length: int | None = None):
    """(summary dict, Crosscoder) of ``base`` against ``after`` (module docstring);
    ``x_after`` are ``after``'s activations of ``encodings`` at ``layer``; ``cache``: the
    crosscoder's name in the disk cache (:mod:`.cache`; read from there when kept, kept there
    once trained), None: trained and not kept; ``run``: where the base model's forward passes
    go (:func:`analysis.features.job.collect_on`), ``max_length`` the cap of ``encodings``."""
    encs, kept = encodings
    same_tokens(base, after, encs)
    acts = collect_on(run, base, corpus, [layer], encodings=encodings, max_length=max_length)
    xa, tok = acts.x[layer], acts.tokens
    train = ~tok.heldout
    m = int(settings.m or default_m(xa.shape[1], int(train.sum())))
    epochs = int(settings.epochs or default_epochs(int(train.sum())))
    cc = dcache.load_crosscoder(cache) if cache else None
    if cc is None:
        cc = train_crosscoder(xa[train], x_after[train], layer, m, settings.k, epochs,
                              settings.batch_size, settings.seed, progress, stop)
        if cache and not (stop is not None and stop()):
            dcache.store_crosscoder(cache, cc)
    held = tok.heldout
    f = cc.encode(xa, x_after)
    ra, rb = cc.decode(f[held])
    r = norm_share(cc.norms())
    classes = [share_class(v) for v in r]
    counts = (f > 0).sum(0)
    alive = counts > 0
    codes = browser.Codes(f, tok)
    summ = browser.summary(codes)
    # each side's most model-specific live latents: the fine-tuned-only ones (share >= 0.9)
    # where there are any, else those leaning furthest that way, most specific first
    by_share = np.argsort(-r, kind="stable")
    side = {"after": [int(j) for j in by_share if alive[j] and r[j] > 0.5][:SPECIFIC],
            "base": [int(j) for j in by_share[::-1] if alive[j] and r[j] < 0.5][:SPECIFIC]}
    scaling = latent_scaling(cc, xa, x_after, side["after"] + side["base"])
    effects = {}
    ft = SimpleNamespace(W_dec=cc.W_dec[1], scale=cc.scales[1], layer=layer, m=cc.m)
    if side["after"] and unavailable(after, ft) is None:
        units = {i: corpus.source[i] for i in tok.inputs}
        effects = class_effects(after, ft, x_after, codes, side["after"], units,
                                stop=stop, only=corpus.scored())
    latents = []
    for name in ("after", "base"):
        for j in side[name]:
            check = scaling.get(j, {})
            aligned = browser.alignment(codes.fires[:, j], tok.labels)[:3]
            latents.append({
                "latent": j, "class": classes[j], "side": name, "share": float(r[j]),
                "freq": float(counts[j] / max(1, len(f))),
                "label": browser.label(summ["top_tokens"][j], aligned),
                "align": aligned[0] if aligned else None,
                "nu_eps": check.get("nu_eps"), "nu_r": check.get("nu_r"),
                "spurious": spurious(check), "contexts": browser.contexts(codes, j, 3, 8),
                "effect": effects.get(j)})
    hist, edges = np.histogram(r[alive], bins=20, range=(0.0, 1.0))
    summary = {
        "layer": int(layer), "base": base.name, "after": after.name, "m": int(cc.m),
        "k": int(cc.k), "theta": float(cc.theta),
        "fve": {"base": fve(xa[held], ra, cc.scales[0]),
                "after": fve(x_after[held], rb, cc.scales[1])},
        "dead": float(1 - alive.mean()),
        "share_histogram": {"edges": edges.tolist(), "counts": hist.tolist()},
        "classes": {c: int(sum(1 for j, k in enumerate(classes) if k == c and alive[j]))
                    for c in CLASSES},
        "latents": latents, "training": cc.card.get("training", {})}
    return summary, cc
