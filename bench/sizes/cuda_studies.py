"""The corpus studies of bench/sizes/cuda.py, each through the library call of its CLI command
(analysis/cli/*.py) with the CLI's defaults: a study loads its models (untimed; every
``load_model`` goes where ``DASHBOARD_DEVICE`` says), then times the call and returns
(the study's JSON, seconds, examples)."""

from __future__ import annotations

from bench.sizes.inputs import timed  # (fn(), seconds), the GPU's queued work finished


def study_noop(ctx):
    from analysis.core.corpus import read_corpus
    from analysis.core.models import load_model
    from analysis.noop import corpus_stats

    ds = read_corpus(ctx.semeval, max_examples=ctx.n["corpus"])
    loaded = load_model(ctx.base)
    stats, s = timed(lambda: corpus_stats(loaded, ds, batch_size=64, norms=False))
    return stats.to_json(), s, len(ds)


def study_noop_norms(ctx):
    from analysis.core.corpus import read_corpus
    from analysis.core.models import load_model
    from analysis.noop import corpus_stats

    ds = read_corpus(ctx.semeval, max_examples=ctx.n["corpus"])
    loaded = load_model(ctx.base)
    stats, s = timed(lambda: corpus_stats(loaded, ds, batch_size=64, norms=True))
    # every metric, the norms too (the study's JSON keeps the command's CLI_METRICS)
    return {**stats.to_json(), "metrics": {k: v.tolist() for k, v in stats.metrics.items()}}, \
        s, len(ds)


def study_gradients(ctx):
    from analysis.core.corpus import read_corpus
    from analysis.noop import loss_head
    from analysis.noop.gradients import GradientsJob
    from analysis.core.execution.corpus import run_local

    ds = read_corpus(ctx.semeval, max_examples=ctx.n["grad"])
    head = loss_head(ctx.clf)
    on = str(next(head.model.parameters()).device)
    if on.split(":")[0] != ctx.device:
        print(f"  note: loss_head put the model on {on}, not {ctx.device}")
    job = GradientsJob(ctx.clf, max_length=512)
    g, s = timed(lambda: run_local(job, head, ds))
    return {"per_head": g.per_head, "n_examples": g.n_examples}, s, len(ds)


def study_drift(ctx):
    from analysis.core.corpus import read_corpus, read_labels
    from analysis.drift import PatternThresholds, compare_models, load_pair
    from analysis.core.encoding import encode_dataset

    ds = read_corpus(ctx.semeval, max_examples=ctx.n["corpus"])
    labels, _ = read_labels(ctx.semeval, ds)
    if labels is not None:
        ds = ds.add_column("label", labels)
    before, after = load_pair(ctx.base, ctx.clf)
    corpus = encode_dataset(before.tokenizer, ds, max_length=before.max_length)
    res, s = timed(lambda: compare_models(before, after, corpus, batch_size=32))
    return res.to_json(PatternThresholds(0.5, 0.5, 0.3, 0.6)), s, len(ds)


def study_syntax(ctx):
    from analysis.core.models import load_model
    from analysis.syntax import read_conllu, syntax_heads

    ds = read_conllu(ctx.conllu, max_sentences=ctx.n["ud"])
    loaded = load_model(ctx.base)
    res, s = timed(lambda: syntax_heads(loaded, ds, batch_size=32))
    return res.to_json(), s, len(ds)


def study_importance(ctx):
    from analysis.importance import importance_study
    from analysis.importance.evalset import load_classifier, load_eval_set

    loaded, card = load_classifier(ctx.clf)
    ev = load_eval_set(loaded, card, "sample", max_examples=ctx.n["importance"])
    res, s = timed(lambda: importance_study(loaded, ev, method="uniform"))
    return res.to_json(), s, ev.n_examples


def study_faithfulness(ctx):
    from analysis.attribution import load_for_attribution
    from analysis.attribution.data import heldout_examples
    from analysis.attribution.faithfulness import (FaithfulnessJob, check_settings,
                                                   examples_dataset)
    from analysis.core.execution.corpus import run_local

    texts, pairs, _ = heldout_examples(ctx.n["faith"])
    loaded = load_for_attribution(ctx.clf)
    methods, ks = check_settings(loaded, None, (1, 5, 10, 20, 50), "drop")
    job = FaithfulnessJob(loaded.spec, methods, ks, "drop", 5, 50, 512)
    ds = examples_dataset(texts, pairs)
    res, s = timed(lambda: run_local(job, loaded, ds))
    return res.to_json(), s, len(texts)


def study_representations(ctx):
    from analysis.cli.representations import read_data
    from analysis.core.models import load_model
    from analysis.representations.corpus import check_probes
    from analysis.representations.run import corpus_representations

    n = ctx.n["reps"]
    ds = read_data(str(ctx.conllu), n)
    probes = check_probes(ds, None)
    loaded = load_model(ctx.base)
    res, s = timed(lambda: corpus_representations(loaded, ds, None, probes, max_sentences=n,
                                                  batch_size=32, seed=0, scatter=False))
    return res.to_json(), s, len(ds)


STUDIES = {"noop": study_noop, "gradients": study_gradients, "drift": study_drift,
           "syntax": study_syntax, "importance": study_importance,
           "faithfulness": study_faithfulness, "representations": study_representations,
           "noop_norms": study_noop_norms}
NEEDS = {"faithfulness": "captum", "syntax": "conllu", "representations": "conllu"}
