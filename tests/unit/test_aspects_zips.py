"""Issue 34 item 4: sixteen visitors clicking "Download the model (.zip)" at once built sixteen
.zips (2.68 GB). The .zip of a model is now built once and shared, and at most two builds run
at a time whatever the models."""

from __future__ import annotations

import gc
import io
import threading
import time
import zipfile

from analysis.absa.zips import ZipCache


class Model:
    """A stand-in model (weak-referenceable, like a torch Module)."""


class SlowMake:
    """A stand-in for checkpoint_zip that takes a while and counts builds running at once."""

    def __init__(self, seconds: float = 0.2, fail: int = 0):
        self.seconds, self.fail = seconds, fail
        self.lock, self.now, self.most, self.calls = threading.Lock(), 0, 0, []

    def __call__(self, model, tokenizer, card, half=True):
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
            self.calls.append(id(model))
        try:
            time.sleep(self.seconds)
            if self.fail:
                self.fail -= 1
                raise OSError("disk full")
            return f"zip of {id(model)} {card['task']} {half}".encode()
        finally:
            with self.lock:
                self.now -= 1


def at_once(fn, n: int) -> list:
    out, errors = [None] * n, []

    def run(k):
        try:
            out[k] = fn(k)
        except Exception as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return out + errors


def test_sixteen_clicks_on_one_model_build_one_zip():
    make, model = SlowMake(), Model()
    cache = ZipCache(make=make)
    got = at_once(lambda k: cache.get(model, None, {"task": "qa_m"}), 16)
    assert make.calls == [id(model)] and len(got) == 16
    assert all(g is got[0] for g in got)  # the same bytes, held once
    assert cache.get(model, None, {"task": "qa_m"}) is got[0] and len(make.calls) == 1
    assert cache.get(model, None, {"task": "nli_m"}) != got[0]  # another card: its own .zip


def test_at_most_two_builds_run_at_once_and_four_are_kept():
    make = SlowMake(0.1)
    cache = ZipCache(builds=2, keep=4, make=make)
    models = [Model() for _ in range(6)]
    got = at_once(lambda k: cache.get(models[k], None, {"task": "qa_m"}), 6)
    assert make.most == 2 and sorted(make.calls) == sorted(map(id, models))
    assert len({bytes(g) for g in got}) == 6
    assert len(cache._done) == 4
    del models[5], got
    gc.collect()
    assert len(cache._done) == 3  # a model's .zip goes with the model


def test_a_failed_build_is_raised_and_the_next_click_builds_again():
    make, model = SlowMake(0.1, fail=1), Model()
    cache = ZipCache(make=make)
    got = at_once(lambda k: cache.get(model, None, {"task": "qa_m"}), 3)
    errors = [g for g in got if isinstance(g, OSError)]
    assert len(errors) == 1 and len(make.calls) == 2  # the waiters built it once more
    assert cache.get(model, None, {"task": "qa_m"}).startswith(b"zip of")


def test_the_shared_cache_makes_the_real_zip(tiny_model_dir):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from analysis.absa.pipeline import load_checkpoint_zip
    from analysis.absa.zips import shared_zips

    folder = tiny_model_dir("bert")
    model = AutoModelForSequenceClassification.from_pretrained(folder, num_labels=5)
    tok = AutoTokenizer.from_pretrained(folder)
    card = {"task": "qa_m", "kind": "absa-sentence-pair"}
    data = shared_zips.get(model, tok, card)
    assert shared_zips.get(model, tok, card) is data
    assert "model.safetensors" in zipfile.ZipFile(io.BytesIO(data)).namelist()
    loaded, _ = load_checkpoint_zip(data, max_params=10**7)
    assert loaded.model.classifier.weight.shape == (5, 32)


