"""The Aspects page's blocks after the model (step 1: ``ui.aspects.models``): the per-kind
heatmaps before | after fine-tuning, ranked tables and baselines, the example words and head
view, and the causal check (docs/METHODS.md sections 6 to 8). Layers and heads are 1-indexed
here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from analysis.aspects.causal import causal_check, evaluation_data
from analysis.absa.data import attach_opinions
from analysis.aspects.heads import discover_models, pair_word_view, query_row, same_layout, \
    score_matrix
from analysis.aspects.heads import KIND_WORDS, unbeatable
from analysis.aspects.reading import causal_reading, reading, within_noise
from analysis.absa.readers import SAMPLE_PATH, load_absa, load_sample, read_aste
from analysis.absa.tasks import build_examples
from analysis.attention.views import head_view_payload
from analysis.core.errors import DataError, InputError
from analysis.core.models import EXAMPLE_SPEC, ModelLoadError, checkpoint_stamp
from ui.common.attention.views import head_view
from ui.common.chart_cache import owned, owned_chart
from ui.common.charts import side_by_side
from ui.common.frame.explain import glossed
from ui.common.errors import plain, show_error
from ui.common.exports.export import chart_downloads
from ui.common.heads import heads_frame, heads_heatmap
from ui.common.html import esc
from ui.common.jobs import run_job
from ui.common.frame.links import attention_link
from ui.common.exports.findings import add_button
from ui.common.frame.resources import get_model
from ui.aspects import state as aspects_state
from ui.aspects.models import METRIC_LABELS, demo
from ui.aspects.state import ModelState
from ui.server.settings import settings

DATA_SOURCES = ["Bundled sample", "Upload a file"]
ORDERS = {"paper's order": None, "review, then auxiliary sentence": "review-aux",
          "auxiliary sentence, then review": "aux-review"}
KIND_SHORT = {"aspect": "Aspect", "aspect_sentiment": "Aspect-sentiment",
              "opposite": "Opposite-aspect", "noop": "No-op"}
KIND_TITLES = {"aspect": "Heads that look at the aspect's words",
               "aspect_sentiment": "Heads that look at the aspect's words or its opinion words",
               "opposite": "Heads that look at the other aspect's words",
               "noop": "Heads that rest on [SEP] when the aspect is absent"}
MODELS = ("before fine-tuning", "after fine-tuning")
_SHARED_DISC: dict = {}  # (example stamp, sentences) -> discovery of the example on the sample


# ---------------------------------------------------------------------------------------------
# Step 2: the heads


@st.cache_resource(max_entries=2, show_spinner=False)
def _sample(stamp: tuple):
    return load_sample()


def bundled_sample():
    """The bundled restaurant sample, read once per (file size, modification time)."""
    st_ = SAMPLE_PATH.stat()
    return _sample((st_.st_size, st_.st_mtime_ns))


@st.cache_data(max_entries=4, show_spinner="Reading the data...")
def read_uploads(name: str, data: bytes, skip: bool, op_name: str | None,
                 op_data: bytes | None):
    """Uploaded reviews (+ optional ASTE opinions) -> Dataset."""
    cap = settings().max_upload_bytes  # each reader checks the bytes it gets
    ds = load_absa(data, skip_invalid=skip, name=name, max_bytes=cap)
    if op_name is not None:
        ds = attach_opinions(ds, read_aste(op_data, name=op_name, max_bytes=cap))
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
    if not owned(after, f"same layout as {before.spec}", lambda: same_layout(before, after)):
        st.caption(plain(f"The base model {spec} has another shape or tokenizer; showing the "
                         "fine-tuned model only."))
        return None
    return before


def auto_heads(state: ModelState, sample: bool) -> bool:
    """Whether the heads are found without a click: the example on the bundled sample."""
    return sample and state.example and state.disc is None


def find_heads(state: ModelState, before, ds, task: str, order: str, max_sent: int,
               shared: bool = False) -> None:
    """Score every head of the model after (and before) fine-tuning through the job queue:
    ``state.disc``. ``shared``: the example on the sample, computed once per server."""
    after = state.loaded
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

            results = run_job("Finding aspect heads", work, key=aspects_state.JOB_HEADS,
                              kind="Aspect heads" + (", before and after fine-tuning"
                                                     if before is not None else ""),
                              size=min(len(ds), max_sent), unit="sentences")
            if shared:
                _SHARED_DISC.clear()
                _SHARED_DISC[key] = results
        state.disc, state.causal = results, None
        state.disc_data = ds.select(range(min(len(ds), max_sent)))
    except (DataError, InputError) as exc:
        show_error(exc)


def verdict_lines(disc: dict) -> list[str]:
    """The plain reading: :func:`analysis.aspects.reading.reading` after (and before)."""
    d, b = disc["after"], disc.get("before")
    return reading(d.ranked, d.baselines, b.ranked if b is not None else None)


def verdict_block(disc: dict) -> None:
    """The verdict in words (after fine-tuning): which kinds have a head whose 95% interval
    lies above every baseline, and which do not."""
    lines = verdict_lines(disc)
    st.info(glossed(plain(lines[0])), icon=":material/gavel:")
    st.markdown(glossed("\n".join(f"- {plain(line)}" for line in lines[1:])))
    st.caption("A head counts when the lower end of its score's bootstrap 95% interval lies "
               "above the score of every baseline below (random head, best fixed position, "
               "most frequent word, uniform); a baseline that scores 1.000, the most any head "
               "can score, is left out (marked in its kind's table).")


def ranked_table(disc: dict, kind: str, folder: str | None) -> pd.DataFrame:
    """The ranked heads of a kind after fine-tuning, with the score before and links."""
    d_after, d_before = disc["after"], disc.get("before")
    rows = d_after.ranked[kind]
    before_m = score_matrix(d_before.hs, kind) if d_before is not None else None
    out = []
    for r in rows:
        row = {"layer": r["layer"] + 1, "head": r["head"] + 1, "score": r["score"],
               "95% CI": f"{r['ci_low']:.3f}–{r['ci_high']:.3f}", "accuracy": r["accuracy"],
               "acc. 95% CI": f"{r['acc_ci_low']:.3f}–{r['acc_ci_high']:.3f}"}
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
    out = unbeatable(base)
    names = ["random_head"] * ("random_head" in base) + ["positional", "frequent_word",
                                                          "uniform"]
    df = pd.DataFrame(rows)
    df["counted"] = ["no: scores 1.000, no head can beat it" if n in out else "yes"
                     for n in names]
    return df


def kind_tab(disc: dict, kind: str, folder: str | None, report: dict | None = None) -> None:
    """Heatmaps before | after, the ranked table and the baselines of one kind."""
    st.subheader(KIND_TITLES[kind])

    def build():
        matrices = {name: score_matrix(disc[key].hs, kind)
                    for name, key in zip(MODELS, ("before", "after")) if key in disc}
        df = heads_frame(matrices, value="score", column="model")
        return heads_heatmap(df, "score", title=f"{KIND_SHORT[kind]} score per head",
                             scheme="viridis", legend="attention mass", facet="model",
                             facet_sort=list(MODELS), columns=2, cell=(26, 24)), df

    # built once per discovery (kept in the session): a rerun only draws it
    built = owned_chart(disc["after"], f"kind {kind} {'before' in disc}", build)
    chart = built.chart
    side_by_side(built, aspects_state.CHART.format(kind))  # before | after; stacked on a phone
    chart_downloads(chart, f"aspect-heads-{kind}", key=aspects_state.DOWNLOAD.format(kind),
                    df=built.df)
    if report is not None:
        add_button(f"{KIND_SHORT[kind]} score per head, before and after fine-tuning",
                   aspects_state.ADD_CHART.format(kind), chart=chart, **report)
    table = owned(disc["after"], f"table {kind} {'before' in disc} {folder}",
                  lambda: ranked_table(disc, kind, folder))
    cfg = {"score": st.column_config.NumberColumn(format="%.3f"),
           "accuracy": st.column_config.NumberColumn(format="%.3f"),
           "before": st.column_config.NumberColumn(format="%.3f"),
           "change": st.column_config.NumberColumn(format="%+.3f")}
    if "open" in table.columns:
        cfg["open"] = st.column_config.LinkColumn("head view", display_text="open")
    st.dataframe(table.head(15), column_config=cfg, hide_index=True,
                 key=aspects_state.TABLE_OF.format(kind))
    if report is not None:
        add_button(f"Top {KIND_SHORT[kind].lower()} heads", aspects_state.ADD_TABLE.format(kind),
                   df=table.head(15), **report)
    if "open" not in table.columns:
        st.caption("Links to the head view on the Attention page come with saved checkpoints "
                   "and the example." if not demo() else "Links to the head view on the "
                   "Attention page come with the example checkpoint.")
    st.markdown("**Baselines** (same pairs; a head is interesting only above these)")
    st.dataframe(baseline_frame(disc["after"].baselines[kind]), hide_index=True,
                 key=aspects_state.BASELINES_OF.format(kind),
                 column_config={"score": st.column_config.NumberColumn(format="%.3f"),
                                "accuracy": st.column_config.NumberColumn(format="%.3f")})


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
    hv_name = st.radio("Head view of", list(shown), horizontal=True,
                       key=aspects_state.HEAD_VIEW_MODEL,
                       bind="query-params")
    labels_w, wmaps, segs_w, special_w = shown[hv_name]
    st.caption(f"Layer {layer + 1} at word level, head {head + 1} shown and the aspect word "
               f"'{plain(pair.words[pair.q[0]])}' pinned; gold words in green. Toggle heads or "
               "click another word in the view.")
    head_view(head_view_payload(labels_w, wmaps[layer], segs_w, special_w, layer=layer,
                                is_pair=True, highlight=gold),
              key=aspects_state.HEAD_VIEW.format(hv_name), heads=[head], pin=pair.q[0])
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


def causal_pairs(state: ModelState, card: dict, task: str, order: str):
    """(pairs, description) the causal check evaluates: the run's held-out pairs, else the
    sentences of step 2 (the card's held-out ones among them when it names any)."""
    if state.eval is not None:
        return state.eval, f"the {len(state.eval)} held-out pairs of the fine-tuning run"
    data, about = evaluation_data(card, state.disc_data)
    try:
        return build_examples(data, task, order), about
    except DataError as exc:
        st.caption(plain(f"No evaluation data: {exc}"))
        return None, about


def run_causal(state: ModelState, pairs, task: str, ranked: list[dict], k: int, kind: str) -> None:
    """The causal check through the job queue: ``state.causal``."""
    after = state.loaded

    def work(progress):
        steps = iter(range(1, 6))
        return causal_check(after.model, after.tokenizer, pairs, task, ranked, k,
                            after.n_layers, after.n_heads,
                            progress=lambda text: progress(next(steps, 5) / 5, text))

    try:
        state.causal = (kind, run_job("Causal check", work, key=aspects_state.JOB_CAUSAL,
                                      kind="Aspect heads' causal check", size=len(pairs),
                                      unit="pairs"))
    except (DataError, InputError) as exc:
        show_error(exc)


def _noise_columns(res: dict, key: str) -> dict:
    """The change's paired bootstrap 95% interval, the random draws' band and whether the
    change is within noise (:func:`analysis.aspects.reading.within_noise`), as the reading
    says them (points, one decimal)."""
    ci = (res.get("ci_top_k") or {}).get(key)
    band = (res.get("random_band") or {}).get(key)
    if ci is None or band is None or res["delta_top_k"][key] != res["delta_top_k"][key]:
        return {}
    return {"change (top) 95% interval": f"{ci[0]:+.1f} to {ci[1]:+.1f}",
            "change (random) range": f"{band[0]:+.1f} to {band[1]:+.1f}",
            "within noise": "yes" if within_noise(res, key) else "no"}


def causal_table(causal, report: dict | None = None) -> None:
    """The metrics with the top-k heads of a kind masked, next to k random heads."""
    if not causal:
        return
    kind, res = causal
    rows = [{"metric": label, "full model": res["full"][key],
             f"top-{res['k']} masked": res["top_k"][key],
             f"random {res['k']} masked": res["random_k"][key],
             "change (top)": res["delta_top_k"][key],
             "change (random)": res["delta_random_k"][key], **_noise_columns(res, key)}
            for key, label in METRIC_LABELS.items()]
    st.markdown(f"**{KIND_SHORT[kind]}** heads masked: " + ", ".join(
        f"{layer + 1}-{head + 1}" for layer, head in res["masked_heads"]))
    df = pd.DataFrame(rows)
    st.dataframe(df, hide_index=True, key=aspects_state.CAUSAL_TABLE,
                 column_config={c: st.column_config.NumberColumn(format="%.1f")
                                for c in df.columns if df[c].dtype.kind == "f"})
    lines = causal_reading(res, KIND_WORDS.get(kind, kind))
    st.info(plain(" ".join(lines)), icon=":material/lightbulb:")
    if report is not None:
        add_button(f"Causal check: top-{res['k']} {KIND_SHORT[kind].lower()} heads masked",
                   aspects_state.ADD_CAUSAL, df=df, reading=lines, **report)
