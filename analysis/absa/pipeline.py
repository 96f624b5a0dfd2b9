"""The one fine-tuning pipeline behind the Aspects page, ``aspects finetune`` and the
benchmark: pairs -> fine-tune (held-out evaluation after each full epoch: the learning curve)
-> final held-out evaluation -> card -> checkpoint folder (docs/METHODS.md section 7)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable
import io
import os
import shutil
import tempfile
import zipfile
import zlib

from analysis.absa.checkpoints import (
    CARD_NAME, FINETUNE_PREFIX, check_checkpoint_target, json_text, load_checkpoint, make_card,
    save_checkpoint,
)
from analysis.absa.finetune import FineTuneResult, TrainProgress, evaluate, fine_tune
from analysis.absa.tasks import PairExample, build_examples, default_pair_order
from analysis.core.errors import InputError
from analysis.core.execution.placements import Away
from analysis.core.models import ModelLoadError, load_model
from analysis.core.sizes import MAX_CONFIG_BYTES, MAX_PARAMS, check_checkpoint_size


@dataclass
class FineTuneRun:
    result: FineTuneResult
    card: dict  # metrics and curve included
    eval_examples: list[PairExample] | None  # the held-out pairs (None without held-out data)
    folder: Path | None = None  # where the checkpoint was saved


def run_fine_tune(loaded, train, test, task: str, *, data: str, pair_order: str | None = None,
                  base_spec: str | None = None, epochs: float = 4, lr: float = 2e-5,
                  batch_size: int = 24, max_length: int = 128, seed: int = 0,
                  out=None, epoch_curve: bool = True,
                  progress: Callable[[TrainProgress], None] | None = None,
                  status: Callable[[str], None] | None = None,
                  on_curve: Callable[[int, dict], None] | None = None,
                  card_extra: dict | None = None, **train_options) -> FineTuneRun:
    """Fine-tune a copy of ``loaded.model`` on the pairs of ``train`` and evaluate it on
    ``test`` (a held-out Dataset, or None).

    With ``epoch_curve`` the held-out metrics after every full pass form the card's ``curve``
    (``on_curve(epoch, metrics)`` is told each point); ``status`` gets a line before each
    evaluation. The card names ``data`` and ``base_spec`` (default: ``loaded.spec``) and holds
    the held-out sentence ids; with ``out`` the checkpoint is saved there (the folder is checked
    first, before any training). ``train_options`` go to :func:`fine_tune` (``max_steps``,
    ``should_stop``, ``time_budget_s``)."""
    order = pair_order or default_pair_order(task)
    if out is not None:
        check_checkpoint_target(out)
    examples = build_examples(train, task, order)
    held = build_examples(test, task, order) if test is not None else None
    curve: list[dict] = []

    def held_out_metrics(model, text: str) -> dict:
        if status:
            status(text)
        return evaluate(model, loaded.tokenizer, held, task, max_length=max_length)

    def epoch_end(k: int, model) -> None:
        m = held_out_metrics(model, f"Evaluating on the held-out sentences after epoch {k}...")
        curve.append({"epoch": k, **m})
        if on_curve:
            on_curve(k, m)

    result = fine_tune(loaded, examples, task, epochs=epochs, lr=lr, batch_size=batch_size,
                       max_length=max_length, seed=seed, progress=progress,
                       epoch_end=epoch_end if held and epoch_curve else None, **train_options)
    metrics = {}
    if held is not None:
        metrics = held_out_metrics(result.model, "Evaluating on the held-out sentences...")
    card = make_card(base_spec or loaded.spec, task, order, data, seed, epochs, max_length,
                     result, metrics, lr=lr,
                     heldout_ids=list(test["id"]) if test is not None else [],
                     **(card_extra or {}), curve=curve, trained=result.record,
                     **({"frozen_layers": result.frozen_layers} if result.frozen_layers else {}))
    folder = None
    if out is not None:
        folder = save_checkpoint(result.model, loaded.tokenizer, out, card)
    return FineTuneRun(result, card, held, folder)


def _fine_tune_apart(spec: str, train, test, task: str, out: str | None, *, send,
                     **options) -> dict:
    """The far side of :func:`run_fine_tune_apart` (a child process or a Ray worker): the model
    loaded by its spec and fine-tuned; the checkpoint written to ``out``, or with ``out`` None
    returned as the bytes of a full-precision .zip (``"zip"``); the training figures back."""
    send("status", "Loading the model in the fine-tune's own process...")
    run = run_fine_tune(load_model(spec), train, test, task, out=out,
                        progress=lambda p: send("step", p), status=lambda t: send("status", t),
                        **options)
    r = run.result
    info = {"losses": r.losses, "seconds": r.seconds, "seconds_per_epoch": r.seconds_per_epoch,
            "n_examples": r.n_examples, "frozen_layers": r.frozen_layers}
    if out is None:
        send("status", "Sending the fine-tuned model back...")
        info["zip"] = checkpoint_zip(r.model, r.tokenizer, run.card, half=False)
    return info


def run_fine_tune_apart(spec: str, train, test, task: str, *,
                        progress: Callable[[TrainProgress], None] | None = None,
                        status: Callable[[str], None] | None = None,
                        on_poll: Callable[[], None] | None = None, nice: int | None = 10,
                        away=None, **options) -> FineTuneRun:
    """:func:`run_fine_tune` of the model ``spec`` away from the calling process (the web
    server keeps its interpreter lock and cores), where ``away`` runs it
    (:class:`analysis.core.execution.placements.Away`, chosen by the server's placement; None: a
    child process of its own at lower priority ``nice``). On this machine the checkpoint is
    written to a private temporary folder, loaded back here and the folder deleted; elsewhere
    (one Ray task: a GPU where the cluster has one) it comes back as a full-precision .zip.
    ``progress`` and ``status`` are told what :func:`run_fine_tune` tells them; ``on_poll()``
    is called every 0.2 s (what it raises stops the work). ``options`` as for
    :func:`run_fine_tune` (``out`` excepted). Same seed, same numbers as in this process."""
    away = away or Away()

    def relay(kind: str, value) -> None:
        tell = progress if kind == "step" else status
        if tell is not None:
            tell(value)

    if not away.here:
        info = away(_fine_tune_apart, spec, train, test, task, None, on_message=relay,
                    on_poll=on_poll, nice=nice, **options)
        loaded, card = load_checkpoint_zip(info.pop("zip"), name="fine-tuned",
                                           max_bytes=2**40, max_params=2**40)
    else:
        tmp = Path(tempfile.mkdtemp(prefix=f"{FINETUNE_PREFIX}{os.getpid()}-"))
        try:
            info = away(_fine_tune_apart, spec, train, test, task, str(tmp / "checkpoint"),
                        on_message=relay, on_poll=on_poll, nice=nice, **options)
            loaded, card = load_checkpoint(tmp / "checkpoint")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    result = FineTuneResult(model=loaded.model, tokenizer=loaded.tokenizer, **info)
    held = build_examples(test, task, card["pair_order"]) if test is not None else None
    return FineTuneRun(result, card, held, None)


# ---------------------------------------------------------------------------------------------
# A checkpoint as a .zip (the demo's download and upload: nothing is written to a server path
# the visitor names; the temporary folder is the server's own and is deleted)

ZIP_FILES = frozenset({  # the only members read back; weights only as safetensors (no pickle)
    "config.json", "model.safetensors", "absa_card.json", "tokenizer.json",
    "tokenizer_config.json", "special_tokens_map.json", "vocab.txt", "vocab.json",
    "merges.txt", "spiece.model", "sentencepiece.bpe.model", "added_tokens.json",
    "generation_config.json"})
MAX_ZIP_BYTES = 400 * 1000 * 1000  # a 100M-parameter encoder in float32 and its tokenizer


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n < 10_000_000 else f"{n / 1e6:.0f} MB"


def checkpoint_zip(model, tokenizer, card: dict, half: bool = True) -> bytes:
    """The checkpoint folder (safetensors, tokenizer, card) as the bytes of a .zip, made in a
    private temporary folder that is deleted. With ``half`` the floating-point weights are
    stored in half precision (float16: half the size, so the example checkpoint's .zip fits
    the server's upload cap and comes back; :func:`load_checkpoint_zip` loads them back as
    float32; attention maps change by about 1e-3)."""
    # lazy: imported when used: torch (heavy)
    import torch

    tmp = Path(tempfile.mkdtemp(prefix="absa-zip-"))
    try:
        state = None
        if half:
            state = {k: v.detach().to("cpu", dtype=torch.float16) if v.is_floating_point()
                     else v.detach().cpu() for k, v in model.state_dict().items()}
        model.save_pretrained(tmp, safe_serialization=True, state_dict=state)
        del state
        tokenizer.save_pretrained(tmp)
        (tmp / CARD_NAME).write_text(json_text(card), encoding="utf-8")
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
            for f in sorted(tmp.iterdir()):
                if f.is_file() and f.name in ZIP_FILES:
                    zf.write(f, f.name)
        return buf.getvalue()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _zip_members(zf, max_bytes: int) -> dict[str, object]:
    """Allowed member name -> ZipInfo; one optional top folder is stripped; anything else
    (other names, nested folders, links, absolute or '..' paths) is refused or ignored."""
    infos = [i for i in zf.infolist() if not i.is_dir()]
    tops = {i.filename.split("/", 1)[0] for i in infos if "/" in i.filename}
    prefix = f"{tops.pop()}/" if len(tops) == 1 and all("/" in i.filename for i in infos) else ""
    out, total = {}, 0
    for i in infos:
        name = i.filename[len(prefix):] if i.filename.startswith(prefix) else i.filename
        if "\\" in i.filename or i.filename.startswith("/") or ".." in i.filename.split("/"):
            raise InputError("The .zip holds a path outside its folder; it is not a checkpoint "
                             "of this dashboard.")
        if name in ZIP_FILES and "/" not in name:
            out[name] = i
            total += i.file_size
    if total > max_bytes:
        raise InputError(f"The checkpoint in the .zip is {_mb(total)} unpacked; the limit is "
                         f"{_mb(max_bytes)}.")
    return out


def load_checkpoint_zip(data: bytes, name: str = "uploaded checkpoint",
                        max_bytes: int = MAX_ZIP_BYTES, max_params: int | None = None):
    """A .zip made by :func:`checkpoint_zip` (or of a checkpoint folder) -> (LoadedModel with
    the classifier, card). Read from memory; before anything is unpacked or allocated, the
    parameters its config.json and safetensors header declare are checked against
    ``max_params`` (default :data:`analysis.core.sizes.MAX_PARAMS`); the allowed members are
    then unpacked, size-capped, into a private temporary folder (``absa-upload-*``, mode 0700)
    removed on every way out (a leftover of a killed process: ``clean_temps``), loaded in
    float32, and the folder is deleted. The model's spec is ``name`` (never a server path).
    InputError with one line on anything else."""
    # lazy: imported when used: torch (heavy)
    import torch

    if len(data) > max_bytes:
        raise InputError(f"The .zip is {_mb(len(data))}; the limit is {_mb(max_bytes)}.")
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError) as exc:
        raise InputError(f"{name} is not a .zip file.") from exc
    tmp = Path(tempfile.mkdtemp(prefix="absa-upload-"))
    try:
        with zf:
            members = _zip_members(zf, max_bytes)
            missing = [f for f in ("config.json", "model.safetensors", CARD_NAME)
                       if f not in members]
            if missing:
                raise InputError(f"{name} is not a checkpoint of this dashboard: "
                                 f"{', '.join(missing)} missing (weights must be safetensors).")
            with zf.open(members["config.json"]) as fh:
                config = fh.read(MAX_CONFIG_BYTES + 1)
            with zf.open(members["model.safetensors"]) as fh:
                check_checkpoint_size(config, fh.read, members["model.safetensors"].file_size,
                                      max_params, name)
            left = max_bytes
            for member, info in members.items():
                with zf.open(info) as src, open(tmp / member, "wb") as dst:
                    while chunk := src.read(1 << 20):
                        left -= len(chunk)
                        if left < 0:  # the header's sizes were false
                            raise InputError(f"{name} unpacks to more than {_mb(max_bytes)}.")
                        dst.write(chunk)
        try:
            loaded, card = load_checkpoint(tmp, max_params=max_params or MAX_PARAMS)
        except (InputError, ModelLoadError) as exc:  # the message would name the temp folder
            text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise InputError(f"{name}: {text.replace(str(tmp), 'the checkpoint')}") from None
        if any(p.dtype != torch.float32 for p in loaded.model.parameters()):
            loaded.model.float()  # a half-precision .zip computes in float32 like the others
        return replace(loaded, spec=name, name=name), card
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError) as exc:
        raise InputError(f"{name} could not be unpacked ({type(exc).__name__}).") from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
