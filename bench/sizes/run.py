"""Every study at real model sizes (issue 30): wall time, peak memory and the study's floor.

For each size (the embedded all-MiniLM-L6-v2, then stand-ins with the published shapes of
distilbert-base-uncased, bert-base-uncased, roberta-base and bert-large-uncased, built by
bench/sizes/standins.py with seeded random weights), each study's main computation through the same
library call its page makes (analysis/...), and in the same run, on the same inputs, the
study's FLOOR: the forward (and backward) passes it cannot avoid, timed as bare ``model(...)``
calls. The ratio study / floor is what the study adds (target <= 1.5x).

Floors:

- attention, representations (one input): one forward of the input;
- corpus statistics, Syntax heads, structural probe, representations (corpus): one forward of
  every sentence, batched as the study batches (length-sorted batches of 32-64);
- Drift: one forward of every sentence through each of its two models (``drift_long``: 300
  lines of 2,000 characters at the demo's 256-token cap, issue 48);
- attribution, mixing methods but value zeroing: one forward with hidden states; value
  zeroing: n forwards of each layer on n tokens (every layer run on n copies of its input, in
  blocks); IG: its steps' forward + backward (the steps batched as the study batches them);
- faithfulness: per pair, IG's forward + backward of its steps (the largest part) - a lower
  bound: the removal curves' forwards are not counted;
- head importance: one forward per ablation above the ablated layer (L*H heads + L layers),
  computed from each layer's measured time on the eval set, plus one full forward;
- ABSA fine-tune (one epoch): the forward + backward of every training batch with the same
  trainable weights (no optimiser step).

Peak memory: the process's resident set sampled every 10 ms during the row (peak, and its rise
above the row's start), and ``torch.cuda.max_memory_allocated`` where CUDA exists.

    nice python -m bench.sizes.run --quick --sizes embedded,bert-base
    nice python -m bench.sizes.run --sizes bert-large --rows attention128,attention512

``reps_corpus`` and ``syntax_probe`` also run the path before issue 48 in the study's place
(scikit-learn's fits, a training loop per layer: bench/references/representations.py,
bench/references/syntax.py) and print the largest difference of their numbers.
    python -m bench.sizes.run --list

Data: ../shared/data (SemEval-2014 restaurants, UD English-EWT dev) and the bundled ABSA
sample; a row whose data is absent says so.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import threading
import time
import traceback
from pathlib import Path

from bench.sizes import standins

ROOT = Path(__file__).resolve().parents[2]

SHARED = ROOT.parent / "shared" / "data"
SEMEVAL = SHARED / "semeval2014" / "Restaurants_Train.xml"
UD_DEV = SHARED / "ud_english_ewt" / "en_ewt-ud-dev.conllu"
SIZES = ("embedded", "distilbert", "bert-base", "roberta-base", "bert-large")
ROWS = ("attention128", "attention512", "noop", "drift", "drift_long", "syntax_heads",
        "syntax_probe",
        "attribution128", "attribution512", "faithfulness", "importance", "reps_input",
        "reps_corpus", "finetune")
# importance: sentences of the bundled sample (5 aspect pairs each: 40 -> 200 pairs)
FULL = dict(noop=1000, drift=500, drift_long=300, syntax=500, faith=165, importance=40,
            reps=1000, finetune_epochs=1.0)
QUICK = dict(noop=64, drift=32, drift_long=20, syntax=32, faith=3, importance=2, reps=64,
             finetune_epochs=0.05)
AUX = "what do you think of the food of it ?"


# ---------------------------------------------------------------- measuring

def rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class Peak:
    """Peak resident set (and CUDA memory) while the ``with`` block runs."""

    def __enter__(self):
        import torch

        gc.collect()
        self.start = self.peak = rss_bytes()
        self.cuda = torch.cuda.is_available()
        if self.cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._watch, daemon=True)
        self._t.start()
        return self

    def _watch(self):
        while not self._stop.wait(0.01):
            self.peak = max(self.peak, rss_bytes())

    def __exit__(self, *exc):
        import torch

        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, rss_bytes())
        self.gpu = torch.cuda.max_memory_allocated() if self.cuda else None
        return False


def sync():
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed(fn):
    sync()
    t0 = time.perf_counter()
    out = fn()
    sync()
    return out, time.perf_counter() - t0


# ---------------------------------------------------------------- inputs

def spec_of(size: str, root: Path | None) -> tuple[str, str]:
    """(encoder spec, classifier checkpoint folder) of a size."""
    if size == "embedded":
        return "default", str(embedded_classifier(root))
    base, clf = standins.build(standins.SHORT[size], root)
    return str(base), str(clf)


def embedded_classifier(root: Path | None) -> Path:
    """The embedded model with a seeded random ABSA head (the example checkpoint's shape
    without its training), built once beside the stand-ins."""
    from transformers import AutoModelForSequenceClassification  # noqa: F401

    from analysis.absa.checkpoints import make_card, save_checkpoint
    from analysis.absa.finetune import make_classifier
    from analysis.core.example import RECIPE
    from analysis.core.models import load_model

    out = (Path(root) if root else standins.standins_root()) / "embedded-clf"
    if (out / "model.safetensors").is_file():
        return out
    loaded = load_model("default", device="cpu")
    clf = make_classifier(loaded, RECIPE.task, seed=standins.SEED)
    clf.config.architectures = [type(clf).__name__]
    from types import SimpleNamespace

    res = SimpleNamespace(n_examples=0, seconds=0.0, seconds_per_epoch=[], losses=[])
    save_checkpoint(clf, loaded.tokenizer, out,
                    make_card("default", RECIPE.task, RECIPE.pair_order, RECIPE.data, 0, 0,
                              RECIPE.max_length, res, standin="random head"))
    return out


def pair_of_length(tokenizer, n: int) -> tuple[str, str]:
    """A review text and the auxiliary question whose pair encodes to n tokens (or the
    nearest count below n a word boundary allows)."""
    words = review_words()
    lo, hi = 1, len(words)
    while len(words) and len(tokenizer(" ".join(words), AUX)["input_ids"]) < n:
        words = words + words
        hi = len(words)
    while lo < hi:  # the most words whose pair has at most n tokens
        mid = (lo + hi + 1) // 2
        if len(tokenizer(" ".join(words[:mid]), AUX)["input_ids"]) <= n:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo]), AUX


def review_words() -> list[str]:
    if SEMEVAL.is_file():
        from analysis.core.corpus import read_corpus

        ds = read_corpus(str(SEMEVAL), max_examples=200)
        return " ".join(ds["text"]).split()
    from analysis.absa.readers import load_sample

    return " ".join(load_sample()["text"]).split()


def batches(tokenizer, texts, pairs=None, batch_size=32, max_length=512):
    """Length-sorted padded batches (the floor's cheapest batching)."""
    enc = [tokenizer(t, p, truncation=True, max_length=max_length)
           for t, p in zip(texts, pairs or [None] * len(texts))]
    order = sorted(range(len(enc)), key=lambda i: len(enc[i]["input_ids"]))
    for s in range(0, len(order), batch_size):
        yield tokenizer.pad([enc[i] for i in order[s:s + batch_size]], return_tensors="pt")


def device_of(model):
    return next(model.parameters()).device


def forward_floor(loaded, texts, pairs=None, batch_size=32, **kw) -> float:
    """Seconds of bare forwards of every text (batched, no grad)."""
    import torch

    model, dev = loaded.model, device_of(loaded.model)
    bs = list(batches(loaded.tokenizer, texts, pairs, batch_size, loaded.max_length))

    def run():
        with torch.inference_mode():
            for b in bs:
                model(**{k: v.to(dev) for k, v in b.items()}, **kw)
    return timed(run)[1]


# ---------------------------------------------------------------- rows

def row_attention(ctx, n_tokens: int):
    import analysis.attention
    import analysis.attention.views as views
    from analysis.core.maps import level_view
    from analysis.core.models import load_model

    loaded = load_model(ctx.base)
    text, pair = pair_of_length(loaded.tokenizer, n_tokens)
    n = len(loaded.tokenizer(text, pair)["input_ids"])

    def study():
        res = analysis.attention.attention_for(loaded, text, pair)
        labels, maps, segments, special = level_view(res, "token", False)
        return views.views_payload(labels, maps, segments, special,
                                   is_pair=res.encoding.is_pair)
    floor = lambda: forward_floor(loaded, [text], [pair], output_attentions=True)  # noqa: E731
    return study, floor, f"{n} tokens"


def semeval_texts(n):
    from analysis.core.corpus import read_corpus

    if not SEMEVAL.is_file():
        raise FileNotFoundError(f"{SEMEVAL} is absent")
    return read_corpus(str(SEMEVAL), max_examples=n)


def row_noop(ctx):
    from analysis.core.models import load_model
    from analysis.noop import corpus_stats

    ds = semeval_texts(ctx.n["noop"])
    loaded = load_model(ctx.base)
    study = lambda: corpus_stats(loaded, ds, batch_size=64, norms=False)  # noqa: E731
    floor = lambda: forward_floor(loaded, list(ds["text"]), batch_size=64,  # noqa: E731
                                  output_attentions=True)
    return study, floor, f"{len(ds)} sentences"


def row_drift(ctx):
    from analysis.drift import compare_models, load_pair
    from analysis.core.encoding import encode_dataset

    ds = semeval_texts(ctx.n["drift"])
    before, after = load_pair(ctx.base, ctx.clf)
    corpus = encode_dataset(before.tokenizer, ds, max_length=before.max_length)
    study = lambda: compare_models(before, after, corpus, batch_size=32)  # noqa: E731

    def floor():
        texts = list(ds["text"])
        return sum(forward_floor(m, texts, output_attentions=True) for m in (before, after))
    return study, floor, f"{len(ds)} sentences, 2 models"


def row_drift_long(ctx):
    """Drift over the demo's longest corpus (issue 48): lines of 2,000 characters of
    SemEval-2014 reviews at the demo's token cap (256), both models; the floor is their two
    forwards with the maps, batched 32 a batch."""
    from dataclasses import replace

    from bench.server import shared as bench_shared

    from analysis.core.encoding import encode_corpus
    from analysis.drift import compare_models, load_pair

    bench_shared.SEMEVAL = SEMEVAL
    lines = bench_shared.long_lines(ctx.n["drift_long"])
    before, after = load_pair(ctx.base, ctx.clf)
    before, after = replace(before, max_length=256), replace(after, max_length=256)
    corpus = encode_corpus(before.tokenizer, lines, max_length=256)
    study = lambda: compare_models(before, after, corpus, batch_size=32)  # noqa: E731

    def floor():
        return sum(forward_floor(m, lines, output_attentions=True) for m in (before, after))
    return study, floor, f"{len(lines)} lines of 2,000 characters at 256 tokens, 2 models"


def treebank(n):
    from analysis.syntax import read_conllu

    if not UD_DEV.is_file():
        raise FileNotFoundError(f"{UD_DEV} is absent")
    return read_conllu(str(UD_DEV), max_sentences=n)


def treebank_texts(ds):
    return [" ".join(w) for w in ds["words"]] if "words" in ds.column_names \
        else [" ".join(t) for t in ds["tokens"]]


def row_syntax_heads(ctx):
    from analysis.core.models import load_model
    from analysis.syntax import syntax_heads

    ds = treebank(ctx.n["syntax"])
    loaded = load_model(ctx.base)
    study = lambda: syntax_heads(loaded, ds, batch_size=32)  # noqa: E731
    floor = lambda: forward_floor(loaded, treebank_texts(ds), output_attentions=True)  # noqa
    return study, floor, f"{len(ds)} sentences"


def row_syntax_probe(ctx):
    """The study (every layer's probe of one kind in one loop), then in the same run the
    training before issue 48 (each layer's probe in a loop of its own,
    bench/references/syntax.py, in the study's place; the evaluation is today's in both), and
    the largest difference of their metrics."""
    from unittest import mock

    from bench.references import syntax as reference_syntax

    from analysis.core.models import load_model
    from analysis.syntax import probe_layers
    from analysis.syntax import probes as probes_mod

    ds = treebank(ctx.n["syntax"])
    loaded = load_model(ctx.base)
    got = {}

    def study():
        got["new"] = probe_layers(loaded, ds, None, rank=64, seed=0, eval_share=0.25)

    def before():
        with mock.patch.object(probes_mod, "train_layers", reference_syntax.train_layers):
            got["old"] = probe_layers(loaded, ds, None, rank=64, seed=0, eval_share=0.25)
        keys = ("uuas", "dspr", "root_acc", "depth_spearman")
        worst = max(abs(a[k] - b[k]) for a, b in zip(got["new"].layers, got["old"].layers)
                    for k in keys)
        print(f"  syntax_probe: largest metric difference, one loop vs a loop per layer: "
              f"{worst:.2e}", flush=True)

    floor = lambda: forward_floor(loaded, treebank_texts(ds), output_hidden_states=True)  # noqa
    what = f"{len(ds)} sentences, every layer"
    return [("syntax_probe", study, floor, what),
            ("syntax_probe: a training loop per layer (before issue 48)", before, floor, what)]


def layer_floor(model, x, mask_2d, block: int) -> float:
    """Seconds of running every encoder layer on n copies of its input (value zeroing's
    floor), ``block`` copies at a time; ``x``: the layers' inputs [L][1, n, d]."""
    import torch

    from analysis.core.hooks import encoder_layers

    layers = encoder_layers(model)
    n = x[0].shape[1]
    ext = (1.0 - mask_2d[:, None, None, :].to(x[0].dtype)) * torch.finfo(x[0].dtype).min

    def run():
        with torch.inference_mode():
            for layer, h in zip(layers, x):
                for s in range(0, n, block):
                    c = min(block, n - s)
                    layer(h.expand(c, -1, -1).contiguous(), attention_mask=ext)
    return timed(run)[1]


def ig_floor(loaded, text, pair, steps: int) -> float:
    """Seconds of IG's forward + backward passes: ``steps`` copies of the input embeddings
    through the classifier, batched as gradient_scores batches them."""
    from analysis.attribution.gradients import _internal_batch

    model, dev = loaded.model, device_of(loaded.model)
    enc = {k: v.to(dev) for k, v in loaded.tokenizer(text, pair, return_tensors="pt").items()}
    n = enc["input_ids"].shape[1]
    emb = model.get_input_embeddings()(enc["input_ids"]).detach()
    per = _internal_batch(model, n, steps)

    def run():
        for s in range(0, steps, per):
            c = min(per, steps - s)
            e = emb.expand(c, -1, -1).clone().requires_grad_(True)
            extra = {k: v.expand(c, -1) for k, v in enc.items() if k != "input_ids"}
            out = model(inputs_embeds=e, **extra).logits
            out[:, 0].sum().backward()
        model.zero_grad(set_to_none=True)
    return timed(run)[1]


def row_attribution(ctx, n_tokens: int):
    """Every mixing method and IG through analysis.attribution.attribute (the page's call),
    one method at a time so each has its own time and floor."""
    from analysis.attribution import attribute, load_for_attribution
    from analysis.attribution.gradients import IG_STEPS
    from analysis.attribution.run import MIXING
    from analysis.attribution.zeroing import block_size
    from analysis.core.forward import forward

    loaded = load_for_attribution(ctx.clf)
    text, pair = pair_of_length(loaded.tokenizer, n_tokens)
    n = len(loaded.tokenizer(text, pair)["input_ids"])
    subrows = []
    for method in MIXING + ("integrated_gradients",):
        if ctx.methods and method not in ctx.methods:
            continue
        if ctx.quick and method in ("value_zeroing", "integrated_gradients") and n > 200:
            subrows.append((method, None, None, "unmeasured: skipped in --quick (long)"))
            continue
        steps = 8 if ctx.quick else IG_STEPS
        study = (lambda m=method: attribute(loaded, text, pair, methods=[m],  # noqa: E731
                                            steps=steps))
        if method == "integrated_gradients":
            floor = (lambda: ig_floor(loaded, text, pair, steps) + forward_floor(  # noqa: E731
                loaded, [text], [pair]))
        elif method == "value_zeroing":
            def floor():
                enc = loaded.tokenizer(text, pair, return_tensors="pt")
                fw = forward(loaded.model, inputs=dict(enc), hidden_states=True)
                hs = [h.detach() for h in fw.hidden_states[:-1]]
                return forward_floor(loaded, [text], [pair], output_hidden_states=True) + \
                    layer_floor(loaded.model, hs, enc["attention_mask"],
                                block_size(n, loaded.model.config))
        else:
            floor = (lambda: forward_floor(  # noqa: E731
                loaded, [text], [pair], output_attentions=True,
                output_hidden_states=True))
        subrows.append((method, study, floor, f"{n} tokens" + (
            f", {steps} IG steps" if method == "integrated_gradients" else "")))
    return subrows


def row_faithfulness(ctx):
    from analysis.attribution import load_for_attribution
    from analysis.attribution.data import heldout_examples
    from analysis.attribution.faithfulness import faithfulness
    from analysis.attribution.gradients import IG_STEPS

    texts, pairs, _ = heldout_examples(ctx.n["faith"])
    loaded = load_for_attribution(ctx.clf)
    steps = 8 if ctx.quick else IG_STEPS
    study = lambda: faithfulness(loaded, texts, pairs, steps=steps)  # noqa: E731
    floor = lambda: sum(ig_floor(loaded, t, p, steps) for t, p in zip(texts, pairs))  # noqa
    return study, floor, f"{len(texts)} pairs, {steps} IG steps (floor: IG only, a lower bound)"


def row_importance(ctx):
    import torch

    from analysis.core.hooks import encoder_layers
    from analysis.importance import importance_study
    from analysis.importance.evalset import load_classifier, load_eval_set

    loaded, card = load_classifier(ctx.clf)
    ev = load_eval_set(loaded, card, "sample", max_examples=ctx.n["importance"])
    study = lambda: importance_study(loaded, ev, method="uniform")  # noqa: E731

    def floor():
        """One full forward, then per ablation the layers from the ablated one up: each
        layer's time on the eval set measured once (its inputs from the full forward)."""
        model, dev = loaded.model, device_of(loaded.model)
        feats = ev.features
        rows = [{k: feats[k][i] for k in feats} for i in range(ev.n_examples)]
        layers = encoder_layers(model)
        L, H = len(layers), loaded.n_heads
        per_layer = [0.0] * L
        t_full = 0.0
        for s in range(0, len(rows), 32):
            b = {k: v.to(dev) for k, v in loaded.tokenizer.pad(rows[s:s + 32],
                                                              return_tensors="pt").items()}
            with torch.inference_mode():
                out, t = timed(lambda: model(**b, output_hidden_states=True))
                t_full += t
                hs = out.hidden_states
                m = b["attention_mask"]
                ext = (1.0 - m[:, None, None, :].to(hs[0].dtype)) * torch.finfo(hs[0].dtype).min
                for i, layer in enumerate(layers):
                    per_layer[i] += timed(lambda: layer(hs[i], attention_mask=ext))[1]
        above = [sum(per_layer[a:]) for a in range(L)]
        return t_full + (H + 1) * sum(above)
    return study, floor, f"{ev.n_examples} pairs, {loaded.n_layers * loaded.n_heads} heads + " \
                         f"{loaded.n_layers} layers (floor computed from per-layer times)"


def row_reps_input(ctx):
    from analysis.core.models import load_model
    from analysis.representations import input_representations

    loaded = load_model(ctx.base)
    text, pair = pair_of_length(loaded.tokenizer, 64)
    study = lambda: input_representations(loaded, text, pair)  # noqa: E731
    floor = lambda: forward_floor(loaded, [text], [pair], output_hidden_states=True)  # noqa
    return study, floor, "one 64-token pair"


def row_reps_corpus(ctx):
    """The study (its probes by the batched torch solver), then in the same run today's path
    before issue 48 (every fold by scikit-learn, bench/references/representations.py, in the study's
    place), and the two runs' probe accuracies side by side."""
    from unittest import mock

    from bench.references import representations as reference_probes

    from analysis.cli.representations import read_data
    from analysis.core.models import load_model
    from analysis.representations import probes as probes_mod
    from analysis.representations.corpus import check_probes
    from analysis.representations.run import corpus_representations

    if not UD_DEV.is_file():
        raise FileNotFoundError(f"{UD_DEV} is absent")
    n = ctx.n["reps"]
    ds = read_data(str(UD_DEV), n)
    probes = check_probes(ds, None)
    loaded = load_model(ctx.base)
    got = {}

    def study():
        got["torch"] = corpus_representations(loaded, ds, None, probes, max_sentences=n,
                                              batch_size=32, seed=0, scatter=True)

    def before():
        with mock.patch.object(probes_mod, "layer_predictions",
                               reference_probes.layer_predictions):
            got["sklearn"] = corpus_representations(loaded, ds, None, probes, max_sentences=n,
                                                    batch_size=32, seed=0, scatter=True)
        for p in probes:
            a = got["torch"].model.probes[p].layers
            b = got["sklearn"].model.probes[p].layers
            print(f"  {p} accuracy, batched solver: {' '.join(f'{x:.4f}' for x in a)}\n"
                  f"  {p} accuracy, scikit-learn:   {' '.join(f'{x:.4f}' for x in b)}\n"
                  f"  largest difference {100 * max(abs(x - y) for x, y in zip(a, b)):.2f} "
                  "points", flush=True)

    floor = lambda: forward_floor(loaded, treebank_texts(ds), output_hidden_states=True)  # noqa
    what = f"{len(ds)} sentences, probes {','.join(probes)}"
    return [("reps_corpus", study, floor, what),
            ("reps_corpus: scikit-learn probes (before issue 48)", before, floor, what)]


def row_finetune(ctx):
    import torch

    from analysis.absa.data import split_dataset
    from analysis.absa.finetune import (_tokenize, freeze_lower_layers, make_classifier,
                                           top_layers_trainable)
    from analysis.absa.pipeline import run_fine_tune
    from analysis.absa.readers import load_sample
    from analysis.absa.tasks import build_examples
    from analysis.core.example import RECIPE, train_options
    from analysis.core.models import load_model

    loaded = load_model(ctx.base)
    train, test = split_dataset(load_sample(), RECIPE.heldout, seed=RECIPE.seed)
    opts = train_options(RECIPE)
    if not top_layers_trainable(loaded.model):
        opts["trained_layers"] = None
    epochs = ctx.n["finetune_epochs"]
    out = Path(ctx.work) / f"ft-{ctx.size}"

    def study():
        return run_fine_tune(loaded, train, test, RECIPE.task, data=RECIPE.data,
                             pair_order=RECIPE.pair_order, base_spec=loaded.spec,
                             epochs=epochs, seed=0, out=out, epoch_curve=False, **opts)

    def floor():
        clf = make_classifier(loaded, RECIPE.task)
        clf.train()
        if opts.get("trained_layers"):
            freeze_lower_layers(clf, loaded.n_layers - opts["trained_layers"])
        ex = build_examples(train, RECIPE.task, RECIPE.pair_order)
        feats = _tokenize(loaded.tokenizer, ex, RECIPE.max_length)
        n_ex = len(feats["input_ids"])
        n_use = max(1, int(round(n_ex * epochs)))
        dev = device_of(clf)

        def run():
            for s in range(0, n_use, RECIPE.batch_size):
                rows = [{k: feats[k][i] for k in feats}
                        for i in range(s, min(n_use, s + RECIPE.batch_size))]
                b = {k: v.to(dev) for k, v in loaded.tokenizer.pad(
                    rows, return_tensors="pt").items()}
                y = torch.tensor([e.label for e in ex[s:s + len(rows)]], device=dev)
                loss = torch.nn.functional.cross_entropy(clf(**b).logits, y)
                loss.backward()
            clf.zero_grad(set_to_none=True)
        return timed(run)[1]
    return study, floor, f"{epochs:g} epoch of the recipe (trained layers " \
                         f"{opts.get('trained_layers') or 'all'})"


ROW_FUNS = {
    "attention128": lambda c: row_attention(c, 128),
    "attention512": lambda c: row_attention(c, 512),
    "noop": row_noop, "drift": row_drift, "drift_long": row_drift_long,
    "syntax_heads": row_syntax_heads,
    "syntax_probe": row_syntax_probe,
    "attribution128": lambda c: row_attribution(c, 128),
    "attribution512": lambda c: row_attribution(c, 512),
    "faithfulness": row_faithfulness, "importance": row_importance,
    "reps_input": row_reps_input, "reps_corpus": row_reps_corpus, "finetune": row_finetune,
}


# ---------------------------------------------------------------- driver

def measure(size, row, name, study, floor, what):
    with Peak() as pk:
        _, secs = timed(study)
    floor_s = floor() if floor is not None else None
    return {"size": size, "row": row, "what": name, "n": what, "seconds": secs,
            "floor_seconds": floor_s,
            "ratio": secs / floor_s if floor_s else None, "peak_rss_mib": pk.peak / 2**20,
            "rss_rise_mib": (pk.peak - pk.start) / 2**20,
            "gpu_peak_mib": pk.gpu / 2**20 if pk.gpu is not None else None}


def run_row(size, row, ctx) -> list[dict]:
    try:
        made = ROW_FUNS[row](ctx)
    except Exception as exc:
        first = str(exc).splitlines()[0][:160] if str(exc) else ""
        return [{"size": size, "row": row, "what": row,
                 "error": f"{type(exc).__name__}: {first}",
                 "traceback": traceback.format_exc(limit=-6)}]
    subrows = made if isinstance(made, list) else [(row, *made)]
    out = []
    for name, study, floor, what in subrows:
        if study is None:
            out.append({"size": size, "row": row, "what": name, "error": what})
            continue
        try:
            out.append(measure(size, row, name, study, floor, what))
        except Exception as exc:
            out.append({"size": size, "row": row, "what": name,
                        "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}",
                        "traceback": traceback.format_exc(limit=-6)})
        gc.collect()
    return out


def markdown(rows: list[dict]) -> str:
    gpu = any(r.get("gpu_peak_mib") is not None for r in rows)
    head = "| size | row | what | n | study s | floor s | ratio | peak RSS MiB | rise MiB |" + \
        (" GPU MiB |" if gpu else "")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['size']} | {r['row']} | {r['what']} | | **{r['error']}** | | | "
                         "| |" + (" |" if gpu else ""))
            continue
        fl = f"{r['floor_seconds']:.2f}" if r["floor_seconds"] is not None else "n/a"
        ra = f"{r['ratio']:.2f}x" if r["ratio"] is not None else "n/a"
        lines.append(f"| {r['size']} | {r['row']} | {r['what']} | {r['n']} | {r['seconds']:.2f} "
                     f"| {fl} | {ra} | {r['peak_rss_mib']:,.0f} | {r['rss_rise_mib']:,.0f} |"
                     + (f" {r['gpu_peak_mib']:,.0f} |" if gpu else ""))
    return "\n".join(lines)


def environment() -> dict:
    import torch

    env = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "python": platform.python_version(), "torch": torch.__version__,
           "threads": torch.get_num_threads(), "cpus": os.cpu_count(),
           "load": os.getloadavg(), "cuda": torch.cuda.is_available()}
    if env["cuda"]:
        env["gpu"] = torch.cuda.get_device_name(0)
    return env


def main(argv=None) -> int:
    from types import SimpleNamespace

    from analysis.core.execution.threads import passive_waits

    passive_waits()  # before torch loads: its OpenMP threads wait as the app's and the CLI's

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default=",".join(SIZES), help=f"comma-separated ({','.join(SIZES)})")
    p.add_argument("--rows", default=",".join(ROWS), help=f"comma-separated ({','.join(ROWS)})")
    p.add_argument("--quick", action="store_true", help="small counts (a development run)")
    p.add_argument("--out", default=None, help="JSON of every row")
    p.add_argument("--root", default=None, help="stand-ins' folder (bench/sizes/standins.py)")
    p.add_argument("--work", default="/tmp/bench_sizes", help="scratch (fine-tune output)")
    p.add_argument("--list", action="store_true", help="print the sizes and rows")
    p.add_argument("--data", default=None, help="bench/sizes/cuda_prep.py's folder (.gpu) instead "
                   "of ../shared/data: its data/ files and minilm/ tokenizer (a GPU machine)")
    p.add_argument("--methods", default=None, help="attribution rows: only these methods "
                   "(comma-separated: attention,norm,norm_resln,alti,value_zeroing,"
                   "integrated_gradients)")
    p.add_argument("--max-minutes", type=float, default=None, help="start no row after this")
    p.add_argument("--count", action="append", default=[], metavar="KEY=N",
                   help=f"override one count ({', '.join(FULL)}); the table's n column says "
                   "what ran")
    args = p.parse_args(argv)
    if args.list:
        print("sizes:", ", ".join(SIZES))
        print("rows:", ", ".join(ROWS))
        return 0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.data:
        global SEMEVAL, UD_DEV
        SEMEVAL = Path(args.data) / "data" / "semeval14_restaurants.xml"
        UD_DEV = Path(args.data) / "data" / "ud_ewt_dev.conllu"
        os.environ.setdefault("STANDIN_TOKENIZER", str(Path(args.data) / "minilm"))
    sizes = [s for s in args.sizes.split(",") if s]
    rows = [r for r in args.rows.split(",") if r]
    bad = [s for s in sizes if s not in SIZES] + [r for r in rows if r not in ROWS]
    if bad:
        print(f"unknown size or row: {', '.join(bad)}", file=sys.stderr)
        return 2
    env = environment()
    print("environment:", json.dumps(env))
    n = dict(QUICK if args.quick else FULL)
    for item in args.count:
        key, _, value = item.partition("=")
        if key not in n:
            print(f"unknown count {key!r}: one of {', '.join(n)}", file=sys.stderr)
            return 2
        n[key] = float(value) if key == "finetune_epochs" else int(value)
    results, t0 = [], time.perf_counter()
    root = Path(args.root) if args.root else None
    for size in sizes:
        base, clf = spec_of(size, root)
        ctx = SimpleNamespace(size=size, base=base, clf=clf, n=n, quick=args.quick,
                              work=args.work, methods=args.methods and args.methods.split(","))
        for row in rows:
            if args.max_minutes and time.perf_counter() - t0 > 60 * args.max_minutes:
                results.append({"size": size, "row": row, "what": row,
                                "error": f"unmeasured: past --max-minutes {args.max_minutes:g}"})
                continue
            print(f"{size} {row} ...", flush=True)
            for r in run_row(size, row, ctx):
                results.append(r)
                print("  " + (r.get("error") or f"{r['what']}: {r['seconds']:.2f} s, floor "
                              f"{r['floor_seconds'] or 0:.2f} s, peak RSS "
                              f"{r['peak_rss_mib']:.0f} MiB"), flush=True)
                if "traceback" in r:
                    print(r["traceback"])
            if args.out:
                Path(args.out).write_text(json.dumps({"environment": env, "quick": args.quick,
                                                      "rows": results}, indent=1), "utf-8")
    env["load_after"] = os.getloadavg()
    print(f"\n{'--quick ' if args.quick else ''}{env['date']}, load {env['load'][0]:.1f} -> "
          f"{env['load_after'][0]:.1f}, {env['threads']} threads, "
          f"{time.perf_counter() - t0:.0f} s in all\n")
    print(markdown(results))
    return 1 if any("error" in r and "unmeasured" not in r["error"]
                    and "skipped" not in r["error"] for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
