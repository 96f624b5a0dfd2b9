"""Aspect heads: fine-tune (or load) an ABSA sentence-pair model, then rank the heads that
attend from the auxiliary sentence's aspect word to the aspect terms, their opinion words,
the other aspect's terms, and [SEP] when the aspect is absent, before vs after fine-tuning."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from analysis import absa as A
from analysis import heads as Hd
from analysis.absa_data import attach_opinions, load_absa, load_sample, read_aste, split_dataset
from analysis.attention import InputError
from analysis.errors import DataError
from analysis.models import ModelLoadError, checkpoint_stamp
from analysis.views import head_view_payload
from ui.attention_view import head_view
from ui.export import chart_downloads
from ui.html import esc
from ui.links import attention_link
from ui.resources import get_model
from ui.sidebar import context

MODEL_SOURCES = ["Fine-tune on the bundled sample", "Load a checkpoint folder"]
DATA_SOURCES = ["Bundled sample", "Upload a file"]
ORDERS = {"paper's order": None, "review, then auxiliary sentence": "review-aux",
          "auxiliary sentence, then review": "aux-review"}
HELDOUT = 0.15
KIND_SHORT = {"aspect": "Aspect", "aspect_sentiment": "Aspect-sentiment",
              "opposite": "Opposite-aspect", "noop": "No-op"}
METRIC_LABELS = {"aspect_f1": "aspect F1", "acc_4way": "4-way acc.", "acc_3way": "3-way acc.",
                 "acc_binary": "binary acc."}
S = st.session_state


@st.cache_resource(max_entries=2, show_spinner="Loading the checkpoint...")
def _checkpoint(path: str, stamp: str):
    return A.load_checkpoint(path)


def checkpoint(path: str):
    """A saved ABSA checkpoint (read-only, shared); loaded anew when the folder is rewritten."""
    return _checkpoint(path, checkpoint_stamp(path))


def fail(exc: BaseException) -> None:
    st.error(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__,
             icon=":material/error:")


def learning_curve_frame(card: dict) -> pd.DataFrame | None:
    """The card's held-out metrics after each epoch, long form (epoch, metric, value); None
    when the card has none (fewer than one full epoch, no held-out data, older cards)."""
    rows = [{"epoch": c["epoch"], "metric": label, "value": c[k]}
            for c in card.get("curve") or [] if isinstance(c, dict) and "epoch" in c
            for k, label in METRIC_LABELS.items()
            if isinstance(c.get(k), (int, float)) and c[k] == c[k]]
    return pd.DataFrame(rows) if rows else None


@st.cache_data(max_entries=4, show_spinner="Reading the data...")
def read_uploads(name: str, data: bytes, skip: bool, op_name: str | None,
                 op_data: bytes | None):
    """Uploaded reviews (+ optional ASTE opinions) -> Dataset; the bytes go to a temporary
    folder (the readers sniff the format from the file) that is removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="absa-upload-") as tmp:
        path = Path(tmp) / Path(name).name
        path.write_bytes(data)
        ds = load_absa(path, skip_invalid=skip)
        if op_name is not None:
            op_path = Path(tmp) / ("opinions-" + Path(op_name).name)
            op_path.write_bytes(op_data)
            ds = attach_opinions(ds, read_aste(op_path))
        return ds


# ---------------------------------------------------------------------------------------------
st.title("Aspect heads")
st.caption(
    "Aspect-based sentiment as sentence pairs (Sun et al. 2019): each review is paired with an "
    "auxiliary sentence per category (price, anecdotes, food, ambience, service). Which heads "
    "look from the aspect word of that sentence at the aspect terms, their opinion words, the "
    "other aspect, or [SEP] when the aspect is absent? Measured per head with bootstrap 95% "
    "intervals and baselines, before and after fine-tuning. Layers and heads are shown "
    "1-indexed (the CLI's JSON is 0-indexed)."
)
ctx = context()

# ---------------------------------------------------------------------------------------------
st.header("1. The fine-tuned model")
source = st.radio("Model", MODEL_SOURCES, key="ah_source", horizontal=True)

if source == MODEL_SOURCES[0]:
    c1, c2, c3, c4 = st.columns([1, 2, 1, 1])
    task = c1.selectbox("Task", A.TASKS, format_func=lambda t: A.TASK_NAMES[t], key="ah_task")
    order_label = c2.selectbox("Pair order", list(ORDERS), key="ah_order",
                               help="The paper puts the review first for QA-M/NLI-M and the "
                                    "auxiliary sentence first for QA-B/NLI-B; the seed blog "
                                    "put the question first.")
    epochs = c3.number_input("Epochs", min_value=0.01, max_value=10.0, value=3.0, step=1.0,
                             key="ah_epochs")
    seed = int(c4.number_input("Seed", min_value=0, value=0, step=1, key="ah_seed"))
    order = ORDERS[order_label] or A.default_pair_order(task)
    st.caption(f"Base model: **{esc(ctx.loaded.name)}** (the sidebar's). A copy is trained "
               f"(AdamW, lr 2e-5, warmup 0.1, batch 24, length-bucketed); "
               f"{HELDOUT:.0%} of the sample is held out for evaluation.")
    if st.button("Fine-tune", type="primary", key="ah_train", icon=":material/model_training:"):
        try:
            train, test = split_dataset(load_sample(), HELDOUT, seed=seed)
            tr_ex = A.build_examples(train, task, order)
            te_ex = A.build_examples(test, task, order)
            bar = st.progress(0.0, text="Starting...")

            def progress(p: A.TrainProgress) -> None:
                bar.progress(p.step / p.total_steps,
                             text=f"step {p.step}/{p.total_steps} · epoch {p.epoch + 1} · "
                                  f"loss {p.loss:.4f} · {p.examples_per_s:.1f} examples/s")

            curve = []

            def epoch_end(k: int, model) -> None:
                bar.progress(1.0, text=f"Evaluating on the held-out sentences after epoch "
                                       f"{k}...")
                curve.append({"epoch": k, **A.evaluate(model, ctx.loaded.tokenizer, te_ex,
                                                       task)})

            res = A.fine_tune(ctx.loaded, tr_ex, task, epochs=float(epochs), seed=seed,
                              progress=progress, epoch_end=epoch_end)
            bar.progress(1.0, text="Evaluating on the held-out sentences...")
            metrics = A.evaluate(res.model, ctx.loaded.tokenizer, te_ex, task)
            bar.empty()
            card = A.make_card(ctx.spec, task, order, "bundled sample", seed, float(epochs), 128,
                               res, metrics, heldout_ids=list(test["id"]), curve=curve)
            S["ah_model"] = {"loaded": A.as_loaded(ctx.loaded, res.model, "fine-tuned"),
                             "card": card, "folder": None, "base": ctx.spec,
                             "eval": te_ex, "losses": res.losses}
            S.pop("ah_disc", None)
            S.pop("ah_causal", None)
        except (DataError, InputError, ModelLoadError) as exc:
            fail(exc)
else:
    c1, c2 = st.columns([4, 1])
    folder = c1.text_input("Checkpoint folder", key="ah_folder",
                           placeholder="/path/to/absa-checkpoint",
                           help="A folder written by this page or `python -m analysis "
                                "finetune` (config, safetensors, tokenizer, absa_card.json).")
    c2.write("")
    if c2.button("Load", key="ah_load", icon=":material/folder_open:") and folder.strip():
        try:
            loaded, card = checkpoint(str(Path(folder.strip()).expanduser().resolve()))
            S["ah_model"] = {"loaded": loaded, "card": card, "folder": loaded.spec,
                             "base": card.get("base_model") or ctx.spec, "eval": None,
                             "losses": None}
            S.pop("ah_disc", None)
            S.pop("ah_causal", None)
        except (InputError, ModelLoadError, DataError, OSError) as exc:
            fail(exc)

model_state = S.get("ah_model")
if model_state is None:
    st.info("Fine-tune a model on the bundled sample (a few minutes on a laptop CPU) or load a "
            "checkpoint folder to start.", icon=":material/info:")
    st.stop()

after = model_state["loaded"]
card = model_state["card"]
task, order = card["task"], card.get("pair_order") or A.default_pair_order(card["task"])
m = card.get("metrics") or {}
st.success(f"{A.TASK_NAMES[task]} model on {card.get('data', '?')} "
           f"({after.n_layers} layers × {after.n_heads} heads, base {card.get('base_model')}).",
           icon=":material/check_circle:")
if m:
    cols = st.columns(len(METRIC_LABELS))
    for col, (k, label) in zip(cols, METRIC_LABELS.items()):
        v = m.get(k)
        col.metric(label, f"{v:.1f}" if isinstance(v, (int, float)) and v == v else "n/a")
    st.caption("Held-out metrics in percent, as in the paper: aspect detection micro F1; "
               "sentiment accuracy over the gold aspects (4-way, 3-way, positive/negative).")
if model_state["losses"]:
    loss_df = pd.DataFrame({"step": np.arange(1, len(model_state["losses"]) + 1),
                            "loss": model_state["losses"]})
    st.altair_chart(alt.Chart(loss_df, title="Training loss").mark_line().encode(
        x="step:Q", y="loss:Q"), width="stretch", height=160)
curve_df = learning_curve_frame(card)
if curve_df is not None:
    st.altair_chart(alt.Chart(curve_df, title="Held-out metrics after each epoch").mark_line(
        point=True).encode(x=alt.X("epoch:Q", axis=alt.Axis(tickMinStep=1)),
                           y=alt.Y("value:Q", title="percent", scale=alt.Scale(zero=False)),
                           color=alt.Color("metric:N", sort=list(METRIC_LABELS.values())),
                           tooltip=["epoch:Q", "metric:N", alt.Tooltip("value:Q", format=".2f")]),
                    width="stretch", height=200)
if model_state["folder"] is None:
    c1, c2 = st.columns([4, 1])
    out = c1.text_input("Save to folder", key="ah_save_to", placeholder="/path/to/new-folder")
    c2.write("")
    if c2.button("Save", key="ah_save", icon=":material/save:") and out.strip():
        try:
            path = A.save_checkpoint(after.model, after.tokenizer, Path(out.strip()), card)
            model_state["folder"] = str(path)
            st.success(f"Saved to {path}", icon=":material/save:")
        except (InputError, OSError) as exc:
            fail(exc)

# ---------------------------------------------------------------------------------------------
st.header("2. Find the heads")
c1, c2 = st.columns([3, 1])
dsource = c1.radio("Gold data", DATA_SOURCES, key="ah_data", horizontal=True,
                   help="Aspect terms with categories (SemEval-16, or SemEval-14 sentences "
                        "with one category, or this project's JSON), opinion words (ASTE), "
                        "absent aspects (sentence-level categories).")
max_sent = int(c2.number_input("Max sentences", min_value=1, max_value=5000, value=60, step=20,
                               key="ah_max"))
ds = None
try:
    if dsource == DATA_SOURCES[0]:
        ds = load_sample()
    else:
        u1, u2 = st.columns(2)
        up = u1.file_uploader("Reviews: SemEval-2014/2016 XML or this project's JSON",
                              type=["xml", "json"], key="ah_upload")
        up_op = u2.file_uploader("Optional opinion words: ASTE triplets (.txt)", type=["txt"],
                                 key="ah_upload_op")
        skip = st.checkbox("Skip sentences whose offsets do not match their text",
                           key="ah_skip")
        if up is not None:
            ds = read_uploads(up.name, up.getvalue(), skip,
                              up_op.name if up_op is not None else None,
                              up_op.getvalue() if up_op is not None else None)
            if ds.info.description:
                st.caption(f"{up.name}: {ds.info.description}.")
except (DataError, InputError, UnicodeDecodeError, FileNotFoundError) as exc:
    fail(exc)
    ds = None
if ds is None:
    st.info("Upload a gold data file to score heads on it.", icon=":material/info:")
    st.stop()

before = None
try:
    before = get_model(model_state["base"])
    if (before.n_layers, before.n_heads) != (after.n_layers, after.n_heads) or \
            before.tokenizer.get_vocab() != after.tokenizer.get_vocab():
        st.caption(f"The base model {model_state['base']} has another shape or tokenizer; "
                   "showing the fine-tuned model only.")
        before = None
except ModelLoadError as exc:
    st.caption(f"The base model could not be loaded ({exc}); showing the fine-tuned model only.")

if st.button("Find aspect heads", type="primary", key="ah_find", icon=":material/search:"):
    try:
        bar = st.progress(0.0, text="Scoring heads...")
        results = {}
        models = [("after", after)] + ([("before", before)] if before is not None else [])
        for n, (name, lm) in enumerate(models):
            def prog(done, total, n=n, name=name):
                bar.progress((n + done / total) / len(models),
                             text=f"{name} fine-tuning: {done}/{total} pairs")

            results[name] = Hd.discover(lm, ds, task, order, max_sentences=max_sent,
                                        progress=prog)
        bar.empty()
        S["ah_disc"] = results
        S["ah_disc_data"] = ds.select(range(min(len(ds), max_sent)))
        S.pop("ah_causal", None)
    except (DataError, InputError) as exc:
        fail(exc)

disc = S.get("ah_disc")
if not disc:
    st.info("Press **Find aspect heads** to score every head.", icon=":material/info:")
    st.stop()
d_after, d_before = disc["after"], disc.get("before")
n_pairs = {k: len(d_after.hs.scores[k]) for k in Hd.KINDS}
st.caption("Pairs per kind: " + ", ".join(f"{KIND_SHORT[k]} {n_pairs[k]}" for k in Hd.KINDS))


def grid_df(matrix: np.ndarray, name: str) -> pd.DataFrame:
    L, H = matrix.shape
    layers, heads = np.meshgrid(np.arange(L), np.arange(H), indexing="ij")
    return pd.DataFrame({"layer": layers.ravel() + 1, "head": heads.ravel() + 1,
                         "score": matrix.ravel().astype(float), "model": name})


def ranked_table(kind: str) -> pd.DataFrame:
    rows = d_after.ranked[kind]
    before_m = Hd.score_matrix(d_before.hs, kind) if d_before is not None else None
    spec = model_state["folder"]
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
    if spec and len(df):
        ex = next((p for p in d_after.hs.pairs if kind in p.sets), None)
        if ex is not None:
            df["open"] = [attention_link(spec, ex.text_a, ex.text_b, layer=r["layer"] + 1,
                                         head=r["head"] + 1, view="Head view", level="word")
                          for r in rows]
    return df


tabs = st.tabs([KIND_SHORT[k] for k in Hd.KINDS])
for tab, kind in zip(tabs, Hd.KINDS):
    with tab:
        st.subheader(Hd.KIND_TITLES[kind])
        if not n_pairs[kind]:
            st.info("The gold data has no pairs of this kind (e.g. no opinion words: upload "
                    "ASTE triplets).", icon=":material/info:")
            continue
        frames = [grid_df(Hd.score_matrix(d_after.hs, kind), "after fine-tuning")]
        if d_before is not None:
            frames.insert(0, grid_df(Hd.score_matrix(d_before.hs, kind), "before fine-tuning"))
        gdf = pd.concat(frames, ignore_index=True)
        L, H = after.n_layers, after.n_heads
        chart = alt.Chart(gdf).mark_rect().encode(
            x=alt.X("head:O"), y=alt.Y("layer:O"),
            color=alt.Color("score:Q", scale=alt.Scale(scheme="viridis"),
                            title="attention mass"),
            column=alt.Column("model:N", title=None, sort="descending"),
            tooltip=["model:N", "layer:O", "head:O", alt.Tooltip("score:Q", format=".3f")],
        ).properties(width=26 * H, height=24 * L,
                     title=f"{KIND_SHORT[kind]} score per head")
        st.altair_chart(chart)
        chart_downloads(chart, f"aspect-heads-{kind}", key=f"ah_dl_{kind}", df=gdf)
        table = ranked_table(kind)
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
        base = d_after.baselines[kind]
        brow = []
        if "random_head" in base:
            brow.append({"baseline": "random head (mean of all heads)",
                         "score": base["random_head"]["score"],
                         "accuracy": base["random_head"]["accuracy"]})
        pos = base["positional"]
        where = f"word {pos['offset'] + 1} of the review" if pos["offset"] >= 0 else \
            f"word {-pos['offset']} from the end"
        brow += [{"baseline": f"fixed position ({where}, best offset)", "score": pos["score"],
                  "accuracy": pos["accuracy"]},
                 {"baseline": "most frequent word", "score": base["frequent_word"]["score"],
                  "accuracy": base["frequent_word"]["accuracy"]},
                 {"baseline": "uniform over candidate words", "score": base["uniform"]["score"],
                  "accuracy": base["uniform"]["accuracy"]}]
        st.markdown("**Baselines** (same pairs; a head is interesting only above these)")
        st.dataframe(pd.DataFrame(brow), hide_index=True, key=f"ah_base_{kind}",
                     column_config={"score": st.column_config.NumberColumn(format="%.3f"),
                                    "accuracy": st.column_config.NumberColumn(format="%.2f")})

# ---------------------------------------------------------------------------------------------
st.header("3. Examples")
kinds_with = [k for k in Hd.KINDS if n_pairs[k]]
c1, c2, c3 = st.columns(3)
ekind = c1.selectbox("Kind", kinds_with, format_func=lambda k: KIND_SHORT[k], key="ah_ekind")
top = d_after.ranked[ekind][:5]
pick = c2.selectbox("Head (top 5 of this kind)", range(len(top)), key="ah_ehead",
                    format_func=lambda i: f"{top[i]['layer'] + 1}-{top[i]['head'] + 1} "
                                          f"(score {top[i]['score']:.3f})")
idx = d_after.hs.pair_index[ekind]
choice = c3.selectbox("Pair", range(len(idx)), key="ah_epair",
                      format_func=lambda i: f"{d_after.hs.pairs[idx[i]].category}: "
                                            f"{d_after.hs.pairs[idx[i]].text_a[:50]}")
pair = d_after.hs.pairs[idx[choice]]
enc = d_after.encodings[idx[choice]]
layer, head = top[pick]["layer"], top[pick]["head"]


def word_maps(lm, enc_):
    """(labels, word-level maps [L,H,W,W], segments, special) of one pair on one model."""
    from analysis.attention import AttentionResult, forward, level_view, stack_attentions

    att = stack_attentions(forward(lm.model, lm.tokenizer, [enc_]), 0, enc_.n_tokens)
    return level_view(AttentionResult(enc_, att), "word")


def words_html(weights: np.ndarray, gold: list[int]) -> str:
    hi = float(weights.max()) or 1.0
    parts = []
    for w, label in enumerate(pair.words):
        alpha = float(weights[w]) / hi
        style = f"background:rgba(230,97,1,{alpha:.2f});"
        if w in gold:
            style += "outline:2px solid #1a7f37;font-weight:600;"
        if w in pair.q:
            style += "text-decoration:underline;"
        parts.append(f"<span class='tok' style='{style}' title='{weights[w]:.3f}'>"
                     f"{esc(label)}</span>")
    return "<div style='line-height:2.2'>" + "".join(parts) + "</div>"


gold = pair.sets[ekind]
st.caption(f"Gold ({KIND_SHORT[ekind]}): **{esc(', '.join(pair.words[i] for i in gold))}** "
           f"(green outline); orange = attention of head {layer + 1}-{head + 1} from the "
           f"underlined aspect word; category {pair.category}, label {pair.label}.")
views = [("after fine-tuning", after)] + ([("before fine-tuning", before)]
                                          if before is not None else [])
shown = {name: word_maps(lm, enc) for name, lm in views}
for name, (_, wmaps, _, _) in shown.items():
    st.markdown(f"*{name}*")
    st.markdown(words_html(Hd.query_row(wmaps, pair.q)[layer, head], gold),
                unsafe_allow_html=True)
hv_name = st.radio("Head view of", list(shown), horizontal=True, key="ah_hv_model")
labels_w, wmaps, segs_w, special_w = shown[hv_name]
st.caption(f"Layer {layer + 1} at word level, head {head + 1} shown and the aspect word "
           f"'{pair.words[pair.q[0]]}' pinned; gold words in green. Toggle heads or click "
           "another word in the view.")
head_view(head_view_payload(labels_w, wmaps[layer], segs_w, special_w, layer=layer,
                            is_pair=True, highlight=gold),
          key=f"ah_head_view_{hv_name}", heads=[head], pin=pair.q[0])
links = []
if model_state["folder"]:
    links.append(f"[fine-tuned head view]({attention_link(model_state['folder'], pair.text_a, pair.text_b, layer + 1, head + 1, view='Head view', level='word')})")
if before is not None:
    links.append(f"[base model head view]({attention_link(before.spec, pair.text_a, pair.text_b, layer + 1, head + 1, view='Head view', level='word')})")
if links:
    st.markdown("Open on the Attention page: " + " · ".join(links))

# ---------------------------------------------------------------------------------------------
st.header("4. Causal check")
eval_ex = model_state["eval"]
if eval_ex is not None:
    eval_on = f"the {len(eval_ex)} held-out pairs of the fine-tuning run"
else:
    data_eval = S.get("ah_disc_data")  # set by step 2, which ran before this section
    held = set(card.get("heldout_ids") or [])
    kept = (data_eval.filter(lambda r: r["id"] in held)
            if held and "id" in data_eval.column_names else None)
    if kept is not None and len(kept):
        data_eval = kept
        eval_on = f"the checkpoint's {len(kept)} held-out sentences (from its card)"
    else:
        eval_on = (f"the {data_eval.num_rows} gold sentences of step 2 (the checkpoint's card "
                   "names no held-out sentences among them, so some may be training data)")
    try:
        eval_ex = A.build_examples(data_eval, task, order) if data_eval is not None else None
    except DataError as exc:
        st.caption(f"No evaluation data: {exc}")
        eval_ex = None
st.caption("Mask the top-k heads of a kind (their output is zeroed, as `head_mask` did) and "
           f"re-evaluate the task on {eval_on}, next to masking k random heads "
           "(mean of 3 draws). Metrics in percent.")
c1, c2 = st.columns(2)
ckind = c1.selectbox("Kind", kinds_with, format_func=lambda k: KIND_SHORT[k], key="ah_ckind")
k = int(c2.number_input("k", min_value=1, max_value=after.n_layers * after.n_heads, value=3,
                        key="ah_k"))
if eval_ex and st.button("Run causal check", key="ah_causal_btn", icon=":material/science:"):
    with st.spinner("Evaluating with heads masked..."):
        t0 = time.perf_counter()
        S["ah_causal"] = (ckind, Hd.causal_check(after.model, after.tokenizer, eval_ex, task,
                                                 d_after.ranked[ckind], k, after.n_layers,
                                                 after.n_heads))
causal = S.get("ah_causal")
if causal:
    ck, res = causal
    rows = []
    for key, label in METRIC_LABELS.items():
        rows.append({"metric": label, "full model": res["full"][key],
                     f"top-{res['k']} masked": res["top_k"][key],
                     f"random {res['k']} masked": res["random_k"][key],
                     "change (top)": res["delta_top_k"][key],
                     "change (random)": res["delta_random_k"][key]})
    st.markdown(f"**{KIND_SHORT[ck]}** heads masked: " + ", ".join(
        f"{layer_ + 1}-{head_ + 1}" for layer_, head_ in res["masked_heads"]))
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="ah_causal_tab",
                 column_config={c: st.column_config.NumberColumn(format="%.1f")
                                for c in pd.DataFrame(rows).columns if c != "metric"})
