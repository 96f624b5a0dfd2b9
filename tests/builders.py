"""Small helpers shared by the test modules."""

import importlib
import os
import pkgutil
import sys
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def patch_everywhere(monkeypatch, module, name: str, value,
                     packages=("analysis", "ui")) -> list[str]:
    """Swap ``module.name`` for ``value`` in ``module`` and in every module of ``packages`` that
    imported it by name (``from module import name`` binds it at import time, so patching
    ``module`` alone misses those callers); the names of the modules patched. All of them are
    imported first: one imported while the patch holds would keep ``value`` for good."""
    for root in packages:
        for info in pkgutil.walk_packages([str(ROOT / root)], prefix=root + "."):
            importlib.import_module(info.name)
    real = getattr(module, name)
    where = [m for m, mod in list(sys.modules.items())
             if m.split(".")[0] in packages and mod is not None
             and getattr(mod, name, None) is real]
    for m in where:
        monkeypatch.setattr(sys.modules[m], name, value)
    return where


def process_gone(pid: int, within: float, every: float = 0.1) -> bool:
    """Whether the process ``pid`` has ended within ``within`` seconds (polled; a zombie, ended
    but not yet reaped by whoever adopted it, has ended)."""
    import time

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except (ProcessLookupError, FileNotFoundError):
            return True
        except OSError:
            pass
        time.sleep(every)
    return False


@contextmanager
def local_ray_cluster():
    """The Ray modules' local 2-CPU cluster on 127.0.0.1 (its workers import this checkout and
    tests/, and run on the CPU): started by the first module that asks and kept for the next
    ones, which one process runs one after the other (tests/tiers.py), so that their jobs share
    the Ray worker processes (each pays torch's and transformers' imports, ~4 CPU-s, once, not
    once a job); shut down by tests/conftest.py after the last Ray test
    (:func:`stop_ray_cluster`), so that no other module's ``--ray auto`` finds it."""
    import ray

    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
                 log_to_driver=False, logging_level="ERROR",
                 runtime_env={"env_vars": {
                     "PYTHONPATH": os.pathsep.join((str(ROOT), str(ROOT / "tests"))),
                     "DASHBOARD_DEVICE": "cpu"}})
    try:
        yield
    finally:
        from analysis.core.execution.raydata import settle

        settle()  # no Ray Data thread left to call into the worker once it is shut down


def stop_ray_cluster() -> None:
    """Shut down the Ray session this process holds (:func:`local_ray_cluster`'s), if any."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        from analysis.core.execution.raydata import settle

        settle()
        ray.shutdown()


def run_cli(*args, env: dict | None = None):
    """``python -m analysis ARGS`` run in this process: the command's own code path
    (``analysis.cli.main``: parsing, exit status, the one line on stderr) without a new
    interpreter's imports (~3.5 CPU-s a call). Returns a ``subprocess.CompletedProcess`` with
    the exit status and what the command printed; ``env`` holds for the call only. (A real
    ``python -m analysis`` process: tests/unit/test_cli_attention.py, tests/integration/
    test_packaging.py.)"""
    import contextlib
    import io
    import subprocess
    from unittest import mock

    from analysis.cli import main

    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    with mock.patch.dict(os.environ, env or {}), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        code = main(argv)
    return subprocess.CompletedProcess([sys.executable, "-m", "analysis", *argv], code,
                                       out.getvalue(), err.getvalue())


def rows(ds):
    return list(zip(ds["text"], ds["text_pair"]))


def one_line(exc) -> str:
    msg = str(exc.value)
    assert "\n" not in msg and msg
    return msg


class CrashingNoopJob:
    """A no-op statistics job (batch 4) whose worker process dies on the shard holding row 5:
    a Ray worker lost mid-job (tests/test_scale_ray.py, tests/test_jobs_cluster_ray.py)."""

    def __init__(self, spec):
        from analysis.noop.corpus import NoopJob

        self.inner = NoopJob(spec, 4)

    def load(self):
        return self.inner.load()

    def map(self, models, shard, rows, progress=None):
        if 5 in list(rows):
            os._exit(1)
        return self.inner.map(models, shard, rows, progress)

    def merge(self, partials):
        return self.inner.merge(partials)


def example_cache_from(finetuned: Path, cache: Path) -> Path:
    """``cache`` holding a copy of ``finetuned`` as a ready example checkpoint (a card beside
    it as a build writes one, for the two-label task of ``finetuned``'s head, with the
    example's recipe), so that the pages open on it."""
    import json
    import shutil

    from analysis.absa.checkpoints import make_card
    from analysis.absa.finetune import FineTuneResult
    from analysis.absa.tasks import default_pair_order
    from analysis.core.example import CARD_NAME, FOLDER, recipe_dict

    folder = Path(shutil.copytree(finetuned, cache / FOLDER))
    card = make_card("stand-in", "qa_b", default_pair_order("qa_b"), "sample", 0, 1, 128,
                     FineTuneResult(None, None, [1.0], 0.0, [], 0),
                     example_recipe=recipe_dict())
    (folder / CARD_NAME).write_text(json.dumps(card))
    return cache


def _tiny_config(arch: str):
    import transformers as T

    common = dict(vocab_size=30522, max_position_embeddings=130)
    if arch == "bert":
        return T.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                            intermediate_size=37, **common)
    if arch == "roberta":
        return T.RobertaConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                               intermediate_size=37, type_vocab_size=2, **common)
    if arch == "distilbert":
        return T.DistilBertConfig(dim=32, n_layers=2, n_heads=4, hidden_dim=37,
                                  vocab_size=30522, max_position_embeddings=128)
    if arch == "albert":
        return T.AlbertConfig(embedding_size=16, hidden_size=32, num_hidden_layers=3,
                              num_attention_heads=4, intermediate_size=37, **common)
    if arch == "electra":
        return T.ElectraConfig(embedding_size=16, hidden_size=32, num_hidden_layers=2,
                               num_attention_heads=4, intermediate_size=37, **common)
    if arch == "gpt2":
        return T.GPT2Config(vocab_size=30522, n_embd=32, n_layer=2, n_head=4)
    raise ValueError(arch)
