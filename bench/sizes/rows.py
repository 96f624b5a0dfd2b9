"""The rows of the sizes table (bench/sizes/run.py): each study's main computation through the
library call its page makes, and its floor (bench/sizes/inputs.py), on the same inputs. A row
function takes the size's context and returns (study, floor, what) or a list of (name, study,
floor, what)."""

from __future__ import annotations

from pathlib import Path

from bench.sizes import inputs
from bench.sizes.inputs import (device_of, forward_floor, ig_floor, layer_floor, pair_of_length,
                                semeval_texts, timed, treebank, treebank_texts)


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

    bench_shared.SEMEVAL = inputs.SEMEVAL
    lines = bench_shared.long_lines(ctx.n["drift_long"])
    before, after = load_pair(ctx.base, ctx.clf)
    before, after = replace(before, max_length=256), replace(after, max_length=256)
    corpus = encode_corpus(before.tokenizer, lines, max_length=256)
    study = lambda: compare_models(before, after, corpus, batch_size=32)  # noqa: E731

    def floor():
        return sum(forward_floor(m, lines, output_attentions=True) for m in (before, after))
    return study, floor, f"{len(lines)} lines of 2,000 characters at 256 tokens, 2 models"


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

    def products():  # after the study: the epochs its probes ran
        probe_products(got["new"], ds, loaded.model.config.hidden_size)

    return [("syntax_probe", study, floor, what),
            ("syntax_probe: the training's bare products, one thread (its bound)", products,
             None, what),
            ("syntax_probe: a training loop per layer (before issue 48)", before, floor, what)]


def probe_products(result, ds, hidden: int) -> float:
    """The structural probes' training reduced to its matrix products (issue 48's bound):
    for every epoch each layer's probe of each kind ran (``result.probes``), the products of
    Adam's step, ``X_b B^T`` and ``G^T X_b``, over the training words in batches of
    ``probes.BATCH`` sentences (the stopping sentences left out), float32 on one torch
    thread; printed as CPU seconds next to the study's training, and the least wall time the
    two workers could take for them. (Left out: the distance probe's per-sentence [n, k] x
    [k, n] products, ~n / D of these.) Returns the products' CPU seconds."""
    import time

    import torch

    from analysis.syntax import probes as probes_mod
    from analysis.syntax.layered import stopping_split
    from analysis.syntax.probes import split_treebank

    train, _ = split_treebank(ds, 0.25)
    words = [len(w) for w in (train["words"] if "words" in train.column_names
                              else train["tokens"])]
    trains, _ = stopping_split(len(words))
    n = sum(words[i] for i in trains)
    trained = [p for pair in result.probes for p in pair]
    epochs = {kind: sum(p.epochs for p in trained if p.kind == kind)
              for kind in ("distance", "depth")}
    rank = result.rank
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        b = max(1, round(n / max(1, len(trains)) * probes_mod.BATCH))  # words of a batch
        x = torch.randn(b, hidden)
        B = torch.randn(rank, hidden)
        g = torch.randn(b, rank)
        steps = -(-n // b)
        t0 = time.process_time()
        for _ in range(sum(epochs.values()) * steps):
            x @ B.T
            g.T @ x
        cpu = time.process_time() - t0
    finally:
        torch.set_num_threads(saved)
    flop = 4.0 * n * hidden * rank * sum(epochs.values())
    print(f"  syntax_probe: the training's bare products: {sum(epochs.values())} layer-epochs "
          f"({epochs['depth']} depth, {epochs['distance']} distance) over {n:,} training words, "
          f"{flop / 1e12:.2f} TFLOP: {cpu:.1f} CPU-s on one thread ({flop / cpu / 1e9:.0f} "
          f"GFLOP/s), {cpu / 2:.1f} s of wall on the two workers at the least; the study's "
          f"training took {result.seconds_train:.1f} s of wall", flush=True)
    return cpu


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

    if not inputs.UD_DEV.is_file():
        raise FileNotFoundError(f"{inputs.UD_DEV} is absent")
    n = ctx.n["reps"]
    ds = read_data(str(inputs.UD_DEV), n)
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
