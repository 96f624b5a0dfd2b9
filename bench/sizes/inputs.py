"""The inputs, floors and measures of the sizes table (bench/sizes/run.py): the data (the
paths ``--data`` points elsewhere), the models of a size, a pair of n tokens, the bare forward
(and backward) passes a study cannot avoid, and the peak memory of a row."""

from __future__ import annotations

import gc
import os
import threading
from pathlib import Path

from bench import harness
from bench.sizes import standins

SEMEVAL = harness.SEMEVAL  # run.py's --data points these at bench/sizes/cuda_prep.py's folder
UD_DEV = harness.EWT_DEV
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


def timed(fn):
    """(fn(), wall seconds), the GPU's queued work finished at both ends."""
    out, t = harness.timed(fn, cuda=True)
    return out, t.wall


# ---------------------------------------------------------------- inputs and floors

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

def semeval_texts(n):
    from analysis.core.corpus import read_corpus

    if not SEMEVAL.is_file():
        raise FileNotFoundError(f"{SEMEVAL} is absent")
    return read_corpus(str(SEMEVAL), max_examples=n)


def treebank(n):
    from analysis.syntax import read_conllu

    if not UD_DEV.is_file():
        raise FileNotFoundError(f"{UD_DEV} is absent")
    return read_conllu(str(UD_DEV), max_sentences=n)


def treebank_texts(ds):
    return [" ".join(w) for w in ds["words"]] if "words" in ds.column_names \
        else [" ".join(t) for t in ds["tokens"]]


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
