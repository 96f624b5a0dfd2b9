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
from analysis.aspects.heads import discover_models, pair_word_view, query_row, same_layout, \
    score_matrix
from analysis.aspects.pipeline import run_fine_tune
from analysis.aspects.readers import load_absa, load_sample, read_aste
from analysis.aspects.tasks import TASK_NAMES, build_examples
from analysis.attention.views import head_view_payload
from analysis.errors import DataError, InputError
from analysis.models import ModelLoadError, checkpoint_stamp
from ui.attention_view import head_view
from ui.errors import show_error
from ui.export import chart_downloads
from ui.heads import heads_frame, heads_heatmap
from ui.html import esc
from ui.links import attention_link
from ui.resources import get_model

MODEL_SOURCES = ["Fine-tune on the bundled sample", "Load a checkpoint folder"]
DATA_SOURCES = ["Bundled sample", "Upload a file"]
ORDERS = {"paper's order": None, "review, then auxiliary sentence": "review-aux",
          "auxiliary sentence, then review": "aux-review"}
HELDOUT = 0.15
KIND_SHORT = {"aspect": "Aspect", "aspect_sentiment": "Aspect-sentiment",
              "opposite": "Opposite-aspect", "noop": "No-op"}
KIND_TITLES = {"aspect": "Aspect heads (T)", "aspect_sentiment": "Aspect-sentiment heads (T or O)",
               "opposite": "Opposite-aspect heads (X)", "noop": "No-op heads ([SEP] when absent)"}
METRIC_LABELS = {"aspect_f1": "aspect F1", "acc_4way": "4-way acc.", "acc_3way": "3-way acc.",
                 "acc_binary": "binary acc."}
MODELS = ("before fine-tuning", "after fine-tuning")
S = st.session_state

# ---------------------------------------------------------------------------------------------
# Step 1: the fine-tuned model


@st.cache_resource(max_entries=2, show_spinner="Loading the checkpoint...")
def _checkpoint(path: str, stamp: str):
    return load_checkpoint(path)


def checkpoint(path: str):
    """A saved ABSA checkpoint (read-only, shared); loaded anew when the folder is rewritten."""
    return _checkpoint(path, checkpoint_stamp(path))


def _new_model(state: dict) -> None:
    S["ah_model"] = state
    S.pop("ah_disc", None)
    S.pop("ah_causal", None)


def fine_tune_on_sample(ctx, task: str, order: str, epochs: float, seed: int) -> None:
    """Fine-tune the sidebar's model on the bundled sample (HELDOUT of it held out), with a
    progress bar; the result becomes the page's model."""
    try:
        train, test = split_dataset(load_sample(), HELDOUT, seed=seed)
        bar = st.progress(0.0, text="Starting...")

        def progress(p) -> None:
            bar.progress(p.step / p.total_steps,
                         text=f"step {p.step}/{p.total_steps} · epoch {p.epoch + 1} · "
                              f"loss {p.loss:.4f} · {p.examples_per_s:.1f} examples/s")

        run = run_fine_tune(ctx.loaded, train, test, task, data="bundled sample",
                            pair_order=order, base_spec=ctx.spec, epochs=epochs, seed=seed,
                            progress=progress, status=lambda text: bar.progress(1.0, text=text))
        bar.empty()
        _new_model({"loaded": as_loaded(ctx.loaded, run.result.model, "fine-tuned"),
                    "card": run.card, "folder": None, "base": ctx.spec,
                    "eval": run.eval_examples, "losses": run.result.losses})
    except (DataError, InputError, ModelLoadError) as exc:
        show_error(exc)


def load_folder(folder: str, base_spec: str) -> None:
    """A checkpoint folder becomes the page's model (its card names the base model)."""
    try:
        loaded, card = checkpoint(str(Path(folder).expanduser().resolve()))
        _new_model({"loaded": loaded, "card": card, "folder": loaded.spec,
                    "base": card.get("base_model") or base_spec, "eval": None, "losses": None})
    except (InputError, ModelLoadError, DataError, OSError) as exc:
        show_error(exc)


def save_model(state: dict, out: str) -> None:
    try:
        path = save_checkpoint(state["loaded"].model, state["loaded"].tokenizer, Path(out),
                               state["card"])
        state["folder"] = str(path)
        st.success(f"Saved to {path}", icon=":material/save:")
    except (InputError, OSError) as exc:
        show_error(exc)


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
    st.success(f"{TASK_NAMES[card['task']]} model on {card.get('data', '?')} "
               f"({after.n_layers} layers × {after.n_heads} heads, base "
               f"{card.get('base_model')}).", icon=":material/check_circle:")
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
        st.caption(f"{up.name}: {ds.info.description}.")
    return ds


def base_model(spec: str, after):
    """The model before fine-tuning, or None (with a caption) when it cannot be compared."""
    try:
        before = get_model(spec)
    except ModelLoadError as exc:
        st.caption(f"The base model could not be loaded ({exc}); showing the fine-tuned model "
                   "only.")
        return None
    if not same_layout(before, after):
        st.caption(f"The base model {spec} has another shape or tokenizer; showing the "
                   "fine-tuned model only.")
        return None
    return before


def find_heads(after, before, ds, task: str, order: str, max_sent: int) -> None:
    """Score every head of the model after (and before) fine-tuning: ``ah_disc``."""
    try:
        bar = st.progress(0.0, text="Scoring heads...")
        models = [("after", after)] + ([("before", before)] if before is not None else [])

        def progress(n: int, name: str, done: int, total: int) -> None:
            bar.progress((n + done / total) / len(models),
                         text=f"{name} fine-tuning: {done}/{total} pairs")

        results = discover_models(models, ds, task, order, max_sentences=max_sent,
                                  progress=progress)
        bar.empty()
        S["ah_disc"] = results
        S["ah_disc_data"] = ds.select(range(min(len(ds), max_sent)))
        S.pop("ah_causal", None)
    except (DataError, InputError) as exc:
        show_error(exc)


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
        st.caption("Save the fine-tuned model to a folder to get links to its head view on "
                   "the Attention page.")
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
    st.caption(f"Gold ({KIND_SHORT[kind]}): **{esc(', '.join(pair.words[j] for j in gold))}** "
               f"(green outline); orange = attention of head {layer + 1}-{head + 1} from the "
               f"underlined aspect word; category {pair.category}, label {pair.label}.")
    shown = {name: pair_word_view(lm, enc) for name, lm in models.items()}
    for name, (_, wmaps, _, _) in shown.items():
        st.markdown(f"*{name}*")
        st.markdown(words_html(pair.words, query_row(wmaps, pair.q)[layer, head], gold, pair.q),
                    unsafe_allow_html=True)
    hv_name = st.radio("Head view of", list(shown), horizontal=True, key="ah_hv_model")
    labels_w, wmaps, segs_w, special_w = shown[hv_name]
    st.caption(f"Layer {layer + 1} at word level, head {head + 1} shown and the aspect word "
               f"'{pair.words[pair.q[0]]}' pinned; gold words in green. Toggle heads or click "
               "another word in the view.")
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
    data, about = evaluation_data(card, S.get("ah_disc_data"))
    try:
        return build_examples(data, task, order), about
    except DataError as exc:
        st.caption(f"No evaluation data: {exc}")
        return None, about


def run_causal(after, pairs, task: str, ranked: list[dict], k: int, kind: str) -> None:
    with st.spinner("Evaluating with heads masked..."):
        S["ah_causal"] = (kind, causal_check(after.model, after.tokenizer, pairs, task, ranked,
                                             k, after.n_layers, after.n_heads))


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
