"""The Aspects page's step 1, the fine-tuned model: the sources (the example checkpoint, a
fine-tune on the bundled sample, a folder, an uploaded .zip), the cached checkpoint loading
(one :class:`ui.aspects.state.ModelState` per source, switching sources loses nothing), the model
export and the summary with its loss and learning curves (docs/METHODS.md section 6)."""

from __future__ import annotations

from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from analysis.absa.checkpoints import as_loaded, load_checkpoint, save_checkpoint
from analysis.absa.data import split_dataset
from analysis.core.example import RECIPE, train_options
from analysis.absa.finetune import top_layers_trainable
from analysis.absa.example import split_sample
from analysis.absa.pipeline import load_checkpoint_zip, run_fine_tune_apart
from analysis.absa.zips import shared_zips
from analysis.absa.readers import load_sample
from analysis.aspects.reading import TASK_FORMS
from analysis.absa.tasks import TASK_NAMES, auxiliary_sentence, build_examples
from analysis.core.errors import DataError, InputError
from analysis.core.sizes import ModelCost
from analysis.core.models import EXAMPLE_SPEC, ModelLoadError, checkpoint_stamp, normalise_spec
from ui.common.chart_cache import draw, owned_chart
from ui.common.exports.download import download_button
from ui.common.frame.explain import glossed
from ui.common.frame.resources import get_classifier
from ui.common.errors import plain, show_error
from ui.common.example import wait_for_example
from ui.common.jobs import SHORT, TRAINING, Apart, run_job
from ui.server.memory import admit_model, hold_model, model_cost, upload_param_cap
from ui.server.settings import SERVER_UPLOAD_MB, settings
from ui.aspects import state as aspects_state
from ui.aspects.state import ModelState

EXAMPLE, TUNE = "Example checkpoint", "Fine-tune on the bundled sample"
FOLDER, UPLOAD = "Load a checkpoint folder", "Upload a checkpoint .zip"
START = "Fine-tune a model on the bundled sample or load a checkpoint to start."
WHILE_WAITING = (
    "**What this page will show.** The example model reads a restaurant review together with "
    f"{TASK_FORMS[RECIPE.task]} (the {TASK_NAMES[RECIPE.task]} task: "
    f"\"{auxiliary_sentence(RECIPE.task, 'food', 'positive')}\") and says whether the review "
    "mentions that aspect and how it feels about it. Once it is ready you will see how well it "
    "does on reviews it never saw, which attention heads look from the aspect word to the "
    "review's words about it, and whether switching those heads off changes its answers. "
    "Meanwhile the Attention, No-op statistics and Syntax pages need no fine-tuned model.")
MAX_ZIP_MB = SERVER_UPLOAD_MB  # = the server's maxUploadSize (.streamlit/config.toml)
METRIC_LABELS = {"aspect_f1": "aspect F1", "acc_4way": "4-way acc.", "acc_3way": "3-way acc.",
                 "acc_binary": "binary acc."}



def page_train_options(model) -> dict:
    """The example recipe's training options for the sidebar's model: the same as the example
    build's, except that a model whose layout cannot train only its top layers (DistilBERT,
    ALBERT) trains every layer instead of being refused (the caption says which)."""
    options = train_options(RECIPE)
    if not top_layers_trainable(model):
        options["trained_layers"] = None
    return options

def trained_part_words(model) -> str:
    """What part of the model the page's fine-tune trains, in words."""
    top = page_train_options(model)["trained_layers"]
    if top is None or top >= model.config.num_hidden_layers:
        return "Every layer is trained."
    return (f"Only the top {top} of its {model.config.num_hidden_layers} layers are trained: "
            "the word vectors and the layers below keep the base model's weights, so training "
            "takes about a third of the time and any change the Fine-tuning drift page shows "
            "is in those top layers.")


def demo() -> bool:
    return settings().demo


def model_sources() -> list[str]:
    """Demo mode: no folder box (a model lives in the visitor's session, as a .zip)."""
    return [EXAMPLE, TUNE, UPLOAD] if demo() else [EXAMPLE, TUNE, FOLDER, UPLOAD]


def model_words(spec) -> str:
    """A model as a visitor knows it: its name in the model list, else its spec."""
    if not spec:
        return "an unnamed model"
    try:
        return settings().model_name(normalise_spec(str(spec))) or str(spec)
    except Exception:  # an odd spec from a card: shown as written
        return str(spec)


def cap(name: str, default, upper):
    """(default, upper bound) of a widget under the demo's cap ``name``."""
    limit = getattr(settings(), name)
    upper = upper if limit is None else min(upper, limit)
    return min(default, upper), upper


# ---------------------------------------------------------------------------------------------
# Step 1: the fine-tuned model: one state per source (switching sources loses nothing); the
# shown one is also kept (``ui.aspects.state``). A state holds its model, card, heads and check.


@st.cache_resource(max_entries=2, show_spinner="Loading the checkpoint...")
def _checkpoint(path: str, stamp: str):
    return load_checkpoint(path)


def checkpoint(path: str):
    """A saved ABSA checkpoint (read-only, shared); loaded anew when the folder is rewritten."""
    return _checkpoint(path, checkpoint_stamp(path))


@st.cache_resource(max_entries=1, show_spinner="Loading the example checkpoint...")
def _example(stamp: str):
    loaded, card = get_classifier(EXAMPLE_SPEC)  # the copy every page shares
    train_test = split_sample()
    return loaded, card, build_examples(train_test[1], card["task"], card["pair_order"])


def current(source: str) -> ModelState | None:
    return aspects_state.model_state(source)


def use_example() -> None:
    """The example checkpoint is the Example source's model without a click; while it is
    being built, its progress (the page reruns by itself when it is ready)."""
    if not wait_for_example(START):
        # its own words explain the task ("the aspect's name alone (the NLI-M task: ...)")
        st.markdown(glossed(WHILE_WAITING, said=(TASK_NAMES[RECIPE.task],)))
        return
    try:
        loaded, card, held = _example(checkpoint_stamp(EXAMPLE_SPEC))
    except (InputError, ModelLoadError, OSError) as exc:
        show_error(exc)
        return
    state = aspects_state.model_state(EXAMPLE)
    if state is None or state.loaded is not loaded:
        aspects_state.set_model_state(EXAMPLE, ModelState(
            loaded, card, EXAMPLE_SPEC, card.get("base_model") or "default", eval=held,
            example=True))


def fine_tune_on_sample(ctx, task: str, order: str, epochs: float, seed: int) -> None:
    """Fine-tune the sidebar's model on the bundled sample with the example's recipe (its
    held-out share, lr, batch, length), through the server's job queue; the result becomes
    the Fine-tune source's model (in the session only)."""
    try:
        train, test = split_dataset(load_sample(), RECIPE.heldout, seed=seed)

        def work(progress, away):
            # away from the server, where its placement puts it (``away``: a process of its
            # own, or one task on the Ray cluster; the server keeps its lock and cores); every
            # poll re-sends the bar, so a visitor who left stops it
            last = [0.0, "Starting the fine-tune in a process of its own..." if away.here
                    else "Sending the fine-tune to the Ray cluster..."]

            def tell(fraction: float, text: str) -> None:
                last[:] = [fraction, text]
                progress(fraction, text)

            def step(p) -> None:
                tell(p.step / p.total_steps, f"step {p.step}/{p.total_steps} · epoch "
                     f"{p.epoch + 1} · loss {p.loss:.4f} · {p.examples_per_s:.1f} examples/s")

            tell(*last)
            return run_fine_tune_apart(ctx.spec, train, test, task, data="bundled sample",
                                       pair_order=order, base_spec=ctx.spec, epochs=epochs,
                                       **page_train_options(ctx.loaded.model), seed=seed,
                                       progress=step, status=lambda text: tell(last[0], text),
                                       on_poll=lambda: progress(*last), nice=nice, away=away)

        nice = settings().job_nice
        cost = model_cost(ctx.loaded)  # the fine-tuned copy has the base model's shape
        admit_model(cost)
        run = run_job("Fine-tuning", Apart(work), key=aspects_state.JOB_FINETUNE,
                      kind="Fine-tuning", size=round(len(train) * epochs),
                      unit="training examples", exclusive=TRAINING)
        hold_model(run.result.model, cost)
        aspects_state.set_model_state(TUNE, ModelState(
            as_loaded(ctx.loaded, run.result.model, "fine-tuned"), run.card, None, ctx.spec,
            eval=run.eval_examples, losses=run.result.losses))
    except (DataError, InputError, ModelLoadError) as exc:
        show_error(exc)


def load_folder(folder: str, base_spec: str) -> None:
    """A checkpoint folder becomes the Load source's model (its card names the base model)."""
    try:
        loaded, card = checkpoint(str(Path(folder).expanduser().resolve()))
        aspects_state.set_model_state(FOLDER, ModelState(
            loaded, card, loaded.spec, card.get("base_model") or base_spec))
    except (InputError, ModelLoadError, DataError, OSError) as exc:
        show_error(exc)


def load_zip(up, base_spec: str) -> None:
    """An uploaded checkpoint .zip (read from memory, unpacked to a private temporary folder
    that is deleted) becomes the Upload source's model; the upload itself is then dropped. Its
    size is checked from its config and weights header first (the host's parameter cap, and
    the visitor's models so far against the per-visitor cap); it loads through the job queue.
    In demo mode the base model its card names is used only when the host lists it (else the
    sidebar's)."""
    cap = upload_param_cap()
    try:
        data = up.getvalue()
        admit_model(ModelCost.of(None, len(data) // 4, 0))  # a lower bound: refused early
        loaded, card = run_job("Loading the uploaded checkpoint", lambda progress: (
            load_checkpoint_zip(data, name=f"uploaded {up.name}",
                                max_bytes=MAX_ZIP_MB * 2**20, max_params=cap)),
            key=aspects_state.JOB_UPLOAD, lane=SHORT, kind="Loading an uploaded checkpoint")
        cost = model_cost(loaded)
        admit_model(cost)
        hold_model(loaded.model, cost)
    except (InputError, ModelLoadError, DataError) as exc:
        show_error(exc)
        return
    base = str(card.get("base_model") or base_spec)
    if demo() and settings().model_name(base) is None:
        base = base_spec
    aspects_state.set_model_state(UPLOAD, ModelState(loaded, card, None, base))
    aspects_state.forget_zip()
    st.rerun()


def save_model(state: ModelState, out: str) -> None:
    try:
        path = save_checkpoint(state.loaded.model, state.loaded.tokenizer, Path(out),
                               state.card)
        state.folder = str(path)
        st.success(plain(f"Saved to {path}"), icon=":material/save:")
    except (InputError, OSError) as exc:
        show_error(exc)


def model_export(state: ModelState) -> None:
    """The model as a .zip download (made when clicked); outside demo mode also the box that
    saves a session model to a folder."""
    lm = state.loaded
    download_button("Download the model (.zip)",
                    lambda: shared_zips.get(lm.model, lm.tokenizer, state.card),
                    f"absa-{state.card['task']}-checkpoint.zip", "application/zip",
                    aspects_state.ZIP_DOWNLOAD,
                    help="Safetensors, tokenizer and card; upload it here again later.")
    if state.folder is None and not demo():
        c1, c2 = st.columns([4, 1])
        out = c1.text_input("Save to folder", key=aspects_state.SAVE_TO,
                            placeholder="/path/to/new-folder")
        c2.write("")
        if c2.button("Save", key=aspects_state.SAVE, icon=":material/save:") and out.strip():
            save_model(state, out.strip())


def learning_curve_frame(card: dict) -> pd.DataFrame | None:
    """The card's held-out metrics after each epoch, long form (epoch, metric, value); None
    when the card has none (fewer than one full epoch, no held-out data, older cards)."""
    rows = [{"epoch": c["epoch"], "metric": label, "value": c[k]}
            for c in card.get("curve") or [] if isinstance(c, dict) and "epoch" in c
            for k, label in METRIC_LABELS.items()
            if isinstance(c.get(k), (int, float)) and c[k] == c[k]]
    return pd.DataFrame(rows) if rows else None


def model_summary(state: ModelState) -> None:
    """What the model is, its held-out metrics, training loss and learning curve."""
    after, card = state.loaded, state.card
    st.success(glossed(plain(f"{TASK_NAMES[card['task']]} model on {card.get('data', '?')} "
                             f"({after.n_layers} layers × {after.n_heads} heads, fine-tuned from "
                             f"{model_words(card.get('base_model'))}).")),
               icon=":material/check_circle:")
    if state.example:
        st.caption(f"The example checkpoint: the embedded model fine-tuned on the bundled "
                   f"sample with the recipe below ({TASK_NAMES[RECIPE.task]}, {RECIPE.epochs:g} "
                   f"epochs, lr {RECIPE.lr:g}, batch {RECIPE.batch_size}); its held-out "
                   f"sentences are {RECIPE.heldout:.0%} of the sample.")
    m = card.get("metrics") or {}
    if m:
        for col, (k, label) in zip(st.columns(len(METRIC_LABELS)), METRIC_LABELS.items()):
            v = m.get(k)
            col.metric(label, f"{v:.1f}" if isinstance(v, (int, float)) and v == v else "n/a")
        st.caption(glossed("Held-out metrics in percent, as in the paper: aspect detection micro "
                           "F1; sentiment accuracy over the gold aspects (4-way, 3-way, "
                           "positive/negative)."))
    # the charts are built once per model (kept in the session): a rerun only draws them
    if state.losses:
        def loss():
            loss_df = pd.DataFrame({"step": np.arange(1, len(state.losses) + 1),
                                    "loss": state.losses})
            return alt.Chart(loss_df, title="Training loss").mark_line().encode(
                x="step:Q", y="loss:Q"), loss_df

        draw(owned_chart(after, "training loss", loss), stretch=True, height=160)
    curve = learning_curve_frame(card)
    if curve is not None:
        def learning():
            return alt.Chart(curve, title="Held-out metrics after each epoch").mark_line(
                point=True).encode(
                x=alt.X("epoch:Q", axis=alt.Axis(tickMinStep=1)),
                y=alt.Y("value:Q", title="percent", scale=alt.Scale(zero=False)),
                color=alt.Color("metric:N", sort=list(METRIC_LABELS.values())),
                tooltip=["epoch:Q", "metric:N", alt.Tooltip("value:Q", format=".2f")]), curve

        draw(owned_chart(after, "learning curve", learning), stretch=True, height=200)
