"""The Aspects page's blocks: the fine-tune runner and cached checkpoint loading (session state
``ah_model``), the model summary with its loss and learning curves, the per-kind heatmaps
before | after fine-tuning, ranked tables and baselines, the example words and head view, and
the causal check (docs/METHODS.md sections 6 to 8). Layers and heads are 1-indexed here."""

from __future__ import annotations

from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from analysis.aspects.causal import causal_check, evaluation_data
from analysis.aspects.checkpoints import as_loaded, load_checkpoint, save_checkpoint
from analysis.aspects.data import attach_opinions, split_dataset
from analysis.aspects.example import RECIPE, load_example, split_sample
from analysis.aspects.heads import discover_models, pair_word_view, query_row, same_layout, \
    score_matrix, verdict
from analysis.aspects.pipeline import checkpoint_zip, load_checkpoint_zip, run_fine_tune
from analysis.aspects.readers import load_absa, load_sample, read_aste
from analysis.aspects.tasks import TASK_NAMES, build_examples
from analysis.attention.views import head_view_payload
from analysis.errors import DataError, InputError
from analysis.models import EXAMPLE_SPEC, ModelLoadError, checkpoint_stamp
from ui.attention_view import head_view
from ui.errors import plain, show_error
from ui.example import wait_for_example
from ui.export import chart_downloads
from ui.heads import heads_frame, heads_heatmap
from ui.html import esc
from ui.jobs import run_job
from ui.links import attention_link
from ui.resources import get_model
from ui.settings import settings

EXAMPLE, TUNE = "Example checkpoint", "Fine-tune on the bundled sample"
FOLDER, UPLOAD = "Load a checkpoint folder", "Upload a checkpoint .zip"
DATA_SOURCES = ["Bundled sample", "Upload a file"]
ORDERS = {"paper's order": None, "review, then auxiliary sentence": "review-aux",
          "auxiliary sentence, then review": "aux-review"}
START = "Fine-tune a model on the bundled sample or load a checkpoint to start."
MAX_ZIP_MB = 100  # the server's maxUploadSize must allow it (.streamlit/config.toml)
KIND_SHORT = {"aspect": "Aspect", "aspect_sentiment": "Aspect-sentiment",
              "opposite": "Opposite-aspect", "noop": "No-op"}
KIND_TITLES = {"aspect": "Aspect heads (T)", "aspect_sentiment": "Aspect-sentiment heads (T or O)",
               "opposite": "Opposite-aspect heads (X)", "noop": "No-op heads ([SEP] when absent)"}
METRIC_LABELS = {"aspect_f1": "aspect F1", "acc_4way": "4-way acc.", "acc_3way": "3-way acc.",
                 "acc_binary": "binary acc."}
MODELS = ("before fine-tuning", "after fine-tuning")
S = st.session_state
_SHARED_DISC: dict = {}  # (example stamp, sentences) -> discovery of the example on the sample


def demo() -> bool:
    return settings().demo


def model_sources() -> list[str]:
    """Demo mode: no folder box (a model lives in the visitor's session, as a .zip)."""
    return [EXAMPLE, TUNE, UPLOAD] if demo() else [EXAMPLE, TUNE, FOLDER, UPLOAD]


def cap(name: str, default, upper):
    """(default, upper bound) of a widget under the demo's cap ``name``."""
    limit = getattr(settings(), name)
    upper = upper if limit is None else min(upper, limit)
    return min(default, upper), upper


# ---------------------------------------------------------------------------------------------
# Step 1: the fine-tuned model: one state per source (switching sources loses nothing); the
# shown one is also ``ah_model``. A state holds its model, card, heads (``disc``) and check.


@st.cache_resource(max_entries=2, show_spinner="Loading the checkpoint...")
def _checkpoint(path: str, stamp: str):
    return load_checkpoint(path)


def checkpoint(path: str):
    """A saved ABSA checkpoint (read-only, shared); loaded anew when the folder is rewritten."""
    return _checkpoint(path, checkpoint_stamp(path))


@st.cache_resource(max_entries=1, show_spinner="Loading the example checkpoint...")
def _example(stamp: str):
    loaded, card = load_example()
    train_test = split_sample()
    return loaded, card, build_examples(train_test[1], card["task"], card["pair_order"])


def current(source: str) -> dict | None:
    state = S.setdefault("ah_states", {}).get(source)
    S["ah_model"] = state
    return state


def _new_model(source: str, state: dict) -> None:
    S.setdefault("ah_states", {})[source] = state
    S["ah_model"] = state


def use_example() -> None:
    """The example checkpoint is the Example source's model without a click; while it is
    being built, its progress (the page reruns by itself when it is ready)."""
    if not wait_for_example(START):
        return
    try:
        loaded, card, held = _example(checkpoint_stamp(EXAMPLE_SPEC))
    except (InputError, ModelLoadError, OSError) as exc:
        show_error(exc)
        return
    state = S.setdefault("ah_states", {}).get(EXAMPLE)
    if state is None or state["loaded"] is not loaded:
        _new_model(EXAMPLE, {"loaded": loaded, "card": card, "folder": EXAMPLE_SPEC,
                             "base": card.get("base_model") or "default", "eval": held,
                             "losses": None, "example": True})


def fine_tune_on_sample(ctx, task: str, order: str, epochs: float, seed: int) -> None:
    """Fine-tune the sidebar's model on the bundled sample with the example's recipe (its
    held-out share, lr, batch, length), through the server's job queue; the result becomes
    the Fine-tune source's model (in the session only)."""
    try:
        train, test = split_dataset(load_sample(), RECIPE.heldout, seed=seed)

        def work(progress):
            last = [0.0]

            def step(p) -> None:
                last[0] = p.step / p.total_steps
                progress(last[0], f"step {p.step}/{p.total_steps} · epoch {p.epoch + 1} · "
                                  f"loss {p.loss:.4f} · {p.examples_per_s:.1f} examples/s")

            return run_fine_tune(ctx.loaded, train, test, task, data="bundled sample",
                                 pair_order=order, base_spec=ctx.spec, epochs=epochs,
                                 lr=RECIPE.lr, batch_size=RECIPE.batch_size,
                                 max_length=RECIPE.max_length, seed=seed, progress=step,
                                 status=lambda text: progress(last[0], text))

        run = run_job("Fine-tuning", work, key="aspects-finetune")
        _new_model(TUNE, {"loaded": as_loaded(ctx.loaded, run.result.model, "fine-tuned"),
                          "card": run.card, "folder": None, "base": ctx.spec,
                          "eval": run.eval_examples, "losses": run.result.losses})
    except (DataError, InputError, ModelLoadError) as exc:
        show_error(exc)


def load_folder(folder: str, base_spec: str) -> None:
    """A checkpoint folder becomes the Load source's model (its card names the base model)."""
    try:
        loaded, card = checkpoint(str(Path(folder).expanduser().resolve()))
        _new_model(FOLDER, {"loaded": loaded, "card": card, "folder": loaded.spec,
                            "base": card.get("base_model") or base_spec, "eval": None,
                            "losses": None})
    except (InputError, ModelLoadError, DataError, OSError) as exc:
        show_error(exc)


def zip_key() -> str:
    """The upload box's key: a new one after each loaded .zip, so the upload is forgotten."""
    return f"ah_zip_{S.get('ah_zip_gen', 0)}"


def load_zip(up, base_spec: str) -> None:
    """An uploaded checkpoint .zip (read from memory, unpacked to a private temporary folder
    that is deleted) becomes the Upload source's model; the upload itself is then dropped. In
    demo mode the base model its card names is used only when the host lists it (else the
    sidebar's)."""
    try:
        with st.spinner("Loading the uploaded checkpoint..."):
            loaded, card = load_checkpoint_zip(up.getvalue(), name=f"uploaded {up.name}",
                                               max_bytes=MAX_ZIP_MB * 1000 * 1000)
    except (InputError, ModelLoadError, DataError) as exc:
        show_error(exc)
        return
    base = str(card.get("base_model") or base_spec)
    if demo() and settings().model_name(base) is None:
        base = base_spec
    _new_model(UPLOAD, {"loaded": loaded, "card": card, "folder": None, "base": base,
                        "eval": None, "losses": None})
    S["ah_zip_gen"] = S.get("ah_zip_gen", 0) + 1
    st.rerun()


def save_model(state: dict, out: str) -> None:
    try:
        path = save_checkpoint(state["loaded"].model, state["loaded"].tokenizer, Path(out),
                               state["card"])
        state["folder"] = str(path)
        st.success(plain(f"Saved to {path}"), icon=":material/save:")
    except (InputError, OSError) as exc:
        show_error(exc)


def model_export(state: dict) -> None:
    """The model as a .zip download (made when clicked); outside demo mode also the box that
    saves a session model to a folder."""
    lm = state["loaded"]
    st.download_button("Download the model (.zip)", key="ah_zip_dl", on_click="ignore",
                       data=lambda: checkpoint_zip(lm.model, lm.tokenizer, state["card"]),
                       file_name=f"absa-{state['card']['task']}-checkpoint.zip",
                       mime="application/zip", icon=":material/download:",
                       help="Safetensors, tokenizer and card; upload it here again later.")
    if state["folder"] is None and not demo():
        c1, c2 = st.columns([4, 1])
        out = c1.text_input("Save to folder", key="ah_save_to", placeholder="/path/to/new-folder")
        c2.write("")
        if c2.button("Save", key="ah_save", icon=":material/save:") and out.strip():
            save_model(state, out.strip())


def learning_curve_frame(card: dict) -> pd.DataFrame | None:
    """The card's held-out metrics after each epoch, long form (epoch, metric, value); None
    when the card has none (fewer than one full epoch, no held-out data, older cards)."""
    rows = [{"epoch": c["epoch"], "metric": label, "value": c[k]}
            for c in card.get("curve") or [] if isinstance(c, dict) and "epoch" in c
            for k, label in METRIC_LABELS.items()
            if isinstance(c.get(k), (int, float)) and c[k] == c[k]]
    return pd.DataFrame(rows) if rows else None


def model_summary(state: dict) -> None:
    """What the model is, its held-out metrics, training loss and learning curve."""
    after, card = state["loaded"], state["card"]
    st.success(plain(f"{TASK_NAMES[card['task']]} model on {card.get('data', '?')} "
                     f"({after.n_layers} layers × {after.n_heads} heads, base "
                     f"{card.get('base_model')})."), icon=":material/check_circle:")
    if state.get("example"):
        st.caption(f"The example checkpoint: the embedded model fine-tuned on the bundled "
                   f"sample with the recipe below ({TASK_NAMES[RECIPE.task]}, {RECIPE.epochs:g} "
                   f"epochs, lr {RECIPE.lr:g}, batch {RECIPE.batch_size}); its held-out "
                   f"sentences are {RECIPE.heldout:.0%} of the sample.")
    m = card.get("metrics") or {}
    if m:
        for col, (k, label) in zip(st.columns(len(METRIC_LABELS)), METRIC_LABELS.items()):
            v = m.get(k)
            col.metric(label, f"{v:.1f}" if isinstance(v, (int, float)) and v == v else "n/a")
        st.caption("Held-out metrics in percent, as in the paper: aspect detection micro F1; "
                   "sentiment accuracy over the gold aspects (4-way, 3-way, positive/negative).")
    if state["losses"]:
        loss_df = pd.DataFrame({"step": np.arange(1, len(state["losses"]) + 1),
                                "loss": state["losses"]})
        st.altair_chart(alt.Chart(loss_df, title="Training loss").mark_line().encode(
            x="step:Q", y="loss:Q"), width="stretch", height=160)
    curve = learning_curve_frame(card)
    if curve is not None:
        st.altair_chart(alt.Chart(curve, title="Held-out metrics after each epoch").mark_line(
            point=True).encode(
            x=alt.X("epoch:Q", axis=alt.Axis(tickMinStep=1)),
            y=alt.Y("value:Q", title="percent", scale=alt.Scale(zero=False)),
            color=alt.Color("metric:N", sort=list(METRIC_LABELS.values())),
            tooltip=["epoch:Q", "metric:N", alt.Tooltip("value:Q", format=".2f")]),
            width="stretch", height=200)


# ---------------------------------------------------------------------------------------------
# Step 2: the heads


@st.cache_data(max_entries=4, show_spinner="Reading the data...")
def read_uploads(name: str, data: bytes, skip: bool, op_name: str | None,
                 op_data: bytes | None):
    """Uploaded reviews (+ optional ASTE opinions) -> Dataset."""
    ds = load_absa(data, skip_invalid=skip, name=name)
    if op_name is not None:
        ds = attach_opinions(ds, read_aste(op_data, name=op_name))
    return ds


def uploaded_data(up, up_op, skip: bool):
    """The uploaded gold data, or None after showing why it cannot be used."""
    try:
        ds = read_uploads(up.name, up.getvalue(), skip,
                          up_op.name if up_op is not None else None,
                          up_op.getvalue() if up_op is not None else None)
    except (DataError, InputError, UnicodeDecodeError, FileNotFoundError) as exc:
        show_error(exc)
        return None
    if ds.info.description:
        st.caption(plain(f"{up.name}: {ds.info.description}."))
    return ds


def base_model(spec: str, after):
    """The model before fine-tuning, or None (with a caption) when it cannot be compared."""
    try:
        before = get_model(spec)
    except ModelLoadError as exc:
        st.caption(plain(f"The base model could not be loaded ({exc}); showing the fine-tuned "
                         "model only."))
        return None
    if not same_layout(before, after):
        st.caption(plain(f"The base model {spec} has another shape or tokenizer; showing the "
                         "fine-tuned model only."))
        return None
    return before


def auto_heads(state: dict, sample: bool) -> bool:
    """Whether the heads are found without a click: the example on the bundled sample."""
    return sample and state.get("example", False) and state.get("disc") is None


def find_heads(state: dict, before, ds, task: str, order: str, max_sent: int,
               shared: bool = False) -> None:
    """Score every head of the model after (and before) fine-tuning through the job queue:
    ``state["disc"]``. ``shared``: the example on the sample, computed once per server."""
    after = state["loaded"]
    key = (checkpoint_stamp(EXAMPLE_SPEC), max_sent, before is not None)
    try:
        results = _SHARED_DISC.get(key) if shared else None
        if results is None:
            models = [("after", after)] + ([("before", before)] if before is not None else [])

            def work(progress):
                def prog(n: int, name: str, done: int, total: int) -> None:
                    progress((n + done / total) / len(models),
                             f"{name} fine-tuning: {done}/{total} pairs")

                return discover_models(models, ds, task, order, max_sentences=max_sent,
                                       progress=prog)

            results = run_job("Finding aspect heads", work, key="aspects-heads")
            if shared:
                _SHARED_DISC.clear()
                _SHARED_DISC[key] = results
        state.update(disc=results, disc_data=ds.select(range(min(len(ds), max_sent))),
                     causal=None)
    except (DataError, InputError) as exc:
        show_error(exc)


def verdict_block(disc: dict) -> None:
    """The verdict in words (after fine-tuning): which kinds have a head whose 95% interval
    lies above every baseline, and which do not."""
    d = disc["after"]
    lines = verdict(d.ranked, d.baselines)
    st.info(plain(lines[0]), icon=":material/gavel:")
    st.markdown("\n".join(f"- {plain(line)}" for line in lines[1:]))
    st.caption("A head counts when the lower end of its score's bootstrap 95% interval lies "
               "above the score of every baseline below (random head, best fixed position, "
               "most frequent word, uniform).")


def ranked_table(disc: dict, kind: str, folder: str | None) -> pd.DataFrame:
    """The ranked heads of a kind after fine-tuning, with the score before and links."""
    d_after, d_before = disc["after"], disc.get("before")
    rows = d_after.ranked[kind]
    before_m = score_matrix(d_before.hs, kind) if d_before is not None else None
    out = []
    for r in rows:
        row = {"layer": r["layer"] + 1, "head": r["head"] + 1, "score": r["score"],
               "95% CI": f"{r['ci_low']:.3f}–{r['ci_high']:.3f}", "accuracy": r["accuracy"],
               "acc. 95% CI": f"{r['acc_ci_low']:.2f}–{r['acc_ci_high']:.2f}"}
        if before_m is not None:
            row["before"] = float(before_m[r["layer"], r["head"]])
            row["change"] = r["score"] - row["before"]
        out.append(row)
    df = pd.DataFrame(out)
    ex = next((p for p in d_after.hs.pairs if kind in p.sets), None)
    if folder and len(df) and ex is not None:
        df["open"] = [attention_link(folder, ex.text_a, ex.text_b, layer=r["layer"] + 1,
                                     head=r["head"] + 1, view="Head view", level="word")
                      for r in rows]
    return df


def baseline_frame(base: dict) -> pd.DataFrame:
    rows = []
    if "random_head" in base:
        rows.append({"baseline": "random head (mean of all heads)", **base["random_head"]})
    pos = base["positional"]
    where = f"word {pos['offset'] + 1} of the review" if pos["offset"] >= 0 else \
        f"word {-pos['offset']} from the end"
    rows += [{"baseline": f"fixed position ({where}, best offset)", "score": pos["score"],
              "accuracy": pos["accuracy"]},
             {"baseline": "most frequent word", **base["frequent_word"]},
             {"baseline": "uniform over candidate words", **base["uniform"]}]
    return pd.DataFrame(rows)


def kind_tab(disc: dict, kind: str, folder: str | None) -> None:
    """Heatmaps before | after, the ranked table and the baselines of one kind."""
    st.subheader(KIND_TITLES[kind])
    matrices = {name: score_matrix(disc[key].hs, kind)
                for name, key in zip(MODELS, ("before", "after")) if key in disc}
    df = heads_frame(matrices, value="score", key="model")
    chart = heads_heatmap(df, "score", title=f"{KIND_SHORT[kind]} score per head",
                          scheme="viridis", legend="attention mass", facet="model",
                          facet_sort=list(MODELS), columns=2, cell=(26, 24))
    st.altair_chart(chart)
    chart_downloads(chart, f"aspect-heads-{kind}", key=f"ah_dl_{kind}", df=df)
    table = ranked_table(disc, kind, folder)
    cfg = {"score": st.column_config.NumberColumn(format="%.3f"),
           "accuracy": st.column_config.NumberColumn(format="%.2f"),
           "before": st.column_config.NumberColumn(format="%.3f"),
           "change": st.column_config.NumberColumn(format="%+.3f")}
    if "open" in table.columns:
        cfg["open"] = st.column_config.LinkColumn("head view", display_text="open")
    st.dataframe(table.head(15), column_config=cfg, hide_index=True, key=f"ah_tab_{kind}")
    if "open" not in table.columns:
        st.caption("Links to the head view on the Attention page come with saved checkpoints "
                   "and the example." if not demo() else "Links to the head view on the "
                   "Attention page come with the example checkpoint.")
    st.markdown("**Baselines** (same pairs; a head is interesting only above these)")
    st.dataframe(baseline_frame(disc["after"].baselines[kind]), hide_index=True,
                 key=f"ah_base_{kind}",
                 column_config={"score": st.column_config.NumberColumn(format="%.3f"),
                                "accuracy": st.column_config.NumberColumn(format="%.2f")})


# ---------------------------------------------------------------------------------------------
# Step 3: an example


def words_html(words: list[str], weights: np.ndarray, gold: list[int], q: list[int]) -> str:
    """The pair's words shaded by one head's attention from Q (underlined); gold outlined."""
    hi = float(weights.max()) or 1.0
    parts = []
    for w, label in enumerate(words):
        style = f"background:rgba(230,97,1,{float(weights[w]) / hi:.2f});"
        if w in gold:
            style += "outline:2px solid #1a7f37;font-weight:600;"
        if w in q:
            style += "text-decoration:underline;"
        parts.append(f"<span class='tok' style='{style}' title='{weights[w]:.3f}'>"
                     f"{esc(label)}</span>")
    return "<div style='line-height:2.2'>" + "".join(parts) + "</div>"


def example(disc: dict, kind: str, i: int, top: dict, models: dict, folder: str | None) -> None:
    """Pair ``i`` under head ``top`` of the kind: the words on each model, then the head view
    of one of them with the aspect word pinned and the gold words marked."""
    pair, enc = disc["after"].hs.pairs[i], disc["after"].encodings[i]
    layer, head, gold = top["layer"], top["head"], pair.sets[kind]
    st.caption(f"Gold ({KIND_SHORT[kind]}): **{plain(', '.join(pair.words[j] for j in gold))}"
               f"** (green outline); orange = attention of head {layer + 1}-{head + 1} from the "
               f"underlined aspect word; category {plain(pair.category)}, label "
               f"{plain(pair.label)}.")
    shown = {name: pair_word_view(lm, enc) for name, lm in models.items()}
    for name, (_, wmaps, _, _) in shown.items():
        st.markdown(f"*{name}*")
        st.markdown(words_html(pair.words, query_row(wmaps, pair.q)[layer, head], gold, pair.q),
                    unsafe_allow_html=True)
    hv_name = st.radio("Head view of", list(shown), horizontal=True, key="ah_hv_model")
    labels_w, wmaps, segs_w, special_w = shown[hv_name]
    st.caption(f"Layer {layer + 1} at word level, head {head + 1} shown and the aspect word "
               f"'{plain(pair.words[pair.q[0]])}' pinned; gold words in green. Toggle heads or "
               "click another word in the view.")
    head_view(head_view_payload(labels_w, wmaps[layer], segs_w, special_w, layer=layer,
                                is_pair=True, highlight=gold),
              key=f"ah_head_view_{hv_name}", heads=[head], pin=pair.q[0])
    before = models.get(MODELS[0])
    specs = [("fine-tuned head view", folder),
             ("base model head view", before.spec if before is not None else None)]
    links = []
    for text, spec in specs:
        if spec:
            url = attention_link(spec, pair.text_a, pair.text_b, layer + 1, head + 1,
                                 view="Head view", level="word")
            links.append(f"[{text}]({url})")
    if links:
        st.markdown("Open on the Attention page: " + " · ".join(links))


# ---------------------------------------------------------------------------------------------
# Step 4: the causal check


def causal_pairs(state: dict, card: dict, task: str, order: str):
    """(pairs, description) the causal check evaluates: the run's held-out pairs, else the
    sentences of step 2 (the card's held-out ones among them when it names any)."""
    if state["eval"] is not None:
        return state["eval"], f"the {len(state['eval'])} held-out pairs of the fine-tuning run"
    data, about = evaluation_data(card, state.get("disc_data"))
    try:
        return build_examples(data, task, order), about
    except DataError as exc:
        st.caption(plain(f"No evaluation data: {exc}"))
        return None, about


def run_causal(state: dict, pairs, task: str, ranked: list[dict], k: int, kind: str) -> None:
    """The causal check through the job queue: ``state["causal"]``."""
    after = state["loaded"]

    def work(progress):
        steps = iter(range(1, 6))
        return causal_check(after.model, after.tokenizer, pairs, task, ranked, k,
                            after.n_layers, after.n_heads,
                            progress=lambda text: progress(next(steps, 5) / 5, text))

    try:
        state["causal"] = (kind, run_job("Causal check", work, key="aspects-causal"))
    except (DataError, InputError) as exc:
        show_error(exc)


def causal_table(causal) -> None:
    """The metrics with the top-k heads of a kind masked, next to k random heads."""
    if not causal:
        return
    kind, res = causal
    rows = [{"metric": label, "full model": res["full"][key],
             f"top-{res['k']} masked": res["top_k"][key],
             f"random {res['k']} masked": res["random_k"][key],
             "change (top)": res["delta_top_k"][key],
             "change (random)": res["delta_random_k"][key]}
            for key, label in METRIC_LABELS.items()]
    st.markdown(f"**{KIND_SHORT[kind]}** heads masked: " + ", ".join(
        f"{layer + 1}-{head + 1}" for layer, head in res["masked_heads"]))
    df = pd.DataFrame(rows)
    st.dataframe(df, hide_index=True, key="ah_causal_tab",
                 column_config={c: st.column_config.NumberColumn(format="%.1f")
                                for c in df.columns if c != "metric"})
