"""AppTest of the Syntax page: it opens on the bundled sample treebank with the head table and
heatmap (the library's numbers), pasted and uploaded CoNLL-U (malformed ones give one plain
message each), the dependency view's escaping, and the before/after section with a tiny model
folder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import ui.server.settings
from analysis.core.errors import DataError
from analysis.syntax.heads import compare_rows
from analysis.syntax.run import syntax_heads
from analysis.syntax.treebank import read_conllu, sample_treebank

from ui.common.errors import WORD_JOINER, plain

from apptest_util import chart_frames

APP = str(Path(__file__).resolve().parents[2] / "app.py")
ROW = "{i}\t{w}\t{w}\t{u}\t_\t_\t{h}\t{r}\t_\t_"


def conllu(*sentences) -> str:
    """CoNLL-U text of sentences given as [(word, upos, head, deprel), ...]."""
    blocks = []
    for k, sent in enumerate(sentences, 1):
        rows = [f"# sent_id = t{k}"] + [ROW.format(i=i, w=w, u=u, h=h, r=r)
                                        for i, (w, u, h, r) in enumerate(sent, 1)]
        blocks.append("\n".join(rows) + "\n")
    return "\n".join(blocks) + "\n"


GOOD = [("The", "DET", 2, "det"), ("soup", "NOUN", 3, "nsubj"), ("arrived", "VERB", 0, "root"),
        (".", "PUNCT", 3, "punct")]
PROBE = [("The", "DET", 2, "det"), ("<b>x</b>", "NOUN", 3, "nsubj"),
         ("{{ok}}", "VERB", 0, "root"), ('"q"', "NOUN", 3, "obj")]


@pytest.fixture(autouse=True)
def _local(monkeypatch):
    """Local mode, no example build; ui.common.frame.sidebar.leave_legacy_navigation() reruns the
    first AppTest run and can forget the switched page (a real server does it once only): tests/
    conftest.py's no_legacy_navigation switches it off."""
    import ui.common.frame.sidebar
    import ui.common.frame.models

    monkeypatch.delenv("DASHBOARD_MODE", raising=False)
    monkeypatch.delenv("DASHBOARD_SETTINGS", raising=False)
    monkeypatch.setenv("DASHBOARD_EXAMPLE_AUTOBUILD", "0")
    monkeypatch.setattr(ui.common.frame.models, "example_ready", lambda: False)
    ui.server.settings.settings.cache_clear()
    yield
    ui.server.settings.settings.cache_clear()


@pytest.fixture(scope="module")
def sample_ref(default_model):
    return syntax_heads(default_model, sample_treebank())


def open_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("pages/syntax.py")
    at.run()
    assert not at.exception, at.exception
    return at


def grid(at):
    frames = [f for f in chart_frames(at) if {"layer", "head", "accuracy"} <= set(f.columns)]
    assert len(frames) == 1
    return frames[0]


def table(at):
    frames = [d.value for d in at.dataframe if "best head" in d.value.columns]
    assert len(frames) == 1
    return frames[0]


def svgs(at) -> list[str]:
    """The dependency views (one line of SVG in a Markdown block each)."""
    return [m.value for m in at.markdown if 'class="dep-view"' in m.value]


def errors(at) -> list[str]:
    return [e.value for e in at.error]


def test_first_visit_shows_the_table_and_heatmap_of_the_sample(sample_ref):
    at = open_page()
    assert [t.value for t in at.title] == ["Syntax"]
    assert not errors(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Sentences"] == str(len(sample_treebank())) == "104"
    assert metrics["Skipped (too long)"] == "0"
    assert metrics["Dependents"] == f"{sample_ref.relations['all'].n:,}"
    assert at.number_input(key="syntax_min").value == 10

    # the Clark-style table: every relation with >= 10 dependents, the library's numbers
    df = table(at).set_index("relation")
    shown = {r for r, rr in sample_ref.relations.items() if rr.n >= 10}
    assert set(df.index) == shown and {"det", "nsubj", "obj", "case", "nmod:poss"} <= shown
    det = sample_ref.relations["det"]
    assert df.loc["det", "n"] == det.n == 151
    assert df.loc["det", "accuracy %"] == pytest.approx(100 * det.best["accuracy"], abs=0.05)
    assert df.loc["det", "baseline %"] == pytest.approx(100 * det.baseline["accuracy"], abs=0.05)
    assert df.loc["det", "best head"] == f"{det.best['layer'] + 1}-{det.best['head'] + 1}"
    assert df.loc["det", "baseline offset"] == f"{det.baseline['offset']:+d}"

    # the heatmap opens on det in its best direction, 1-indexed layers and heads
    assert at.selectbox(key="syntax_rel").value == "det"
    assert at.radio(key="syntax_dir").value == det.best["direction"]
    g = grid(at).sort_values(["layer", "head"])
    assert len(g) == 6 * 12 and g["layer"].min() == 1 and g["head"].max() == 12
    np.testing.assert_allclose(g["accuracy"].to_numpy(),
                               getattr(det, det.best["direction"]).ravel(), atol=1e-6)
    # the picked head is the best one; the example's dependency view draws its det arcs
    assert at.selectbox(key="syntax_layer").value == det.best["layer"] + 1
    assert at.selectbox(key="syntax_head").value == det.best["head"] + 1
    (svg,) = svgs(at)
    first = sample_treebank()[0]  # "The soup was cold, but the bread was fresh."
    assert svg.count('class="dep-arc gold"') == first["deprels"].count("det") == 2
    assert svg.count('class="dep-arc below') == 2
    # the reading is the library's
    assert "relations with at least 10 examples" in at.markdown[0].value


def test_relation_and_direction_pick_the_heatmap(sample_ref):
    at = open_page()
    at.selectbox(key="syntax_rel").set_value("nmod:poss").run()
    at.radio(key="syntax_dir").set_value("head_to_dep").run()
    assert not at.exception and not errors(at)
    g = grid(at).sort_values(["layer", "head"])
    ref = sample_ref.relations["nmod:poss"].head_to_dep
    np.testing.assert_allclose(g["accuracy"].to_numpy(), ref.ravel(), atol=1e-6)
    layer, head = np.unravel_index(int(np.argmax(ref)), ref.shape)
    assert at.selectbox(key="syntax_layer").value == layer + 1
    assert at.selectbox(key="syntax_head").value == head + 1
    (svg,) = svgs(at)
    assert 'class="dep-arc gold"' in svg


def test_pasted_treebank_with_markup_words_is_shown_literally():
    at = open_page()
    at.button_group(key="syntax_source").set_value("Paste").run()
    assert [i.value for i in at.info][0].startswith("Paste CoNLL-U")
    at.text_area(key="syntax_paste").set_value(conllu(GOOD, PROBE)).run()
    assert not at.exception and not errors(at)
    assert at.number_input(key="syntax_min").value == 1
    assert {m.label: m.value for m in at.metric}["Sentences"] == "2"
    df = table(at).set_index("relation")
    assert df.loc["det", "n"] == 2 and df.loc["all", "n"] == 6
    at.selectbox(key="syntax_rel").set_value("nsubj").run()
    at.selectbox(key="syntax_example").set_value(1).run()
    (svg,) = svgs(at)
    assert "&lt;b&gt;x&lt;/b&gt;" in svg and "<b>" not in svg
    assert "&quot;q&quot;" in svg and "{{ok}}" in svg
    assert svg.count('class="dep-arc gold"') == 1 and 'data-head="3" data-dep="2"' in svg


BAD = {  # what is wrong -> what the message says
    "a cycle": (conllu([("a", "DET", 2, "det"), ("b", "NOUN", 1, "nsubj"),
                        ("c", "VERB", 0, "root")]), "a cycle"),
    "two roots": (conllu([("a", "NOUN", 0, "root"), ("b", "VERB", 0, "root")]), "two roots"),
    "a head outside": (conllu([("a", "NOUN", 7, "nsubj"), ("b", "VERB", 0, "root")]),
                       "outside the sentence"),
    "a missing column": ("1\tThe\tthe\tDET\t_\t_\t2\tdet\n"
                         "2\tsoup\tsoup\tNOUN\t_\t_\t0\troot\t_\t_\n", "a missing column"),
    "no dependency rows": ("# text = Hi there\n1\tHi\thi\tINTJ\t_\t_\t_\t_\t_\t_\n"
                           "2\tthere\tthere\tADV\t_\t_\t_\t_\t_\t_\n", "has no dependency rows"),
}


def unescaped(msg: str) -> str:
    return msg.replace("\\", "").replace(WORD_JOINER, "")


@pytest.mark.parametrize("why", list(BAD))
def test_malformed_uploads_give_one_plain_message(why):
    text, says = BAD[why]
    at = open_page()
    at.button_group(key="syntax_source").set_value("Upload").run()
    at.file_uploader(key="syntax_upload").set_value(("bad.conllu", text.encode(),
                                                     "text/plain")).run()
    assert not at.exception
    (msg,) = errors(at)
    assert says in unescaped(msg) and "bad.conllu" in unescaped(msg)
    assert "\n" not in msg and "Traceback" not in msg
    with pytest.raises(DataError) as exc:  # the library call the page makes
        read_conllu(text.encode(), name="bad.conllu")
    assert msg == plain(str(exc.value))
    assert not at.dataframe and not svgs(at)


def test_non_utf8_upload_and_the_library_call_the_page_makes():
    import ui.syntax.blocks as syntax_blocks

    data = "1\tcafé\tcafé\tNOUN\t_\t_\t0\troot\t_\t_\n".encode("latin-1")

    class Upload:
        name = "latin.conllu"

        def getvalue(self):
            return data

    with pytest.raises(DataError) as exc:
        syntax_blocks.read_treebank(syntax_blocks.UPLOAD, 10, upload=Upload())
    assert "UTF-8" in str(exc.value) and "\n" not in str(exc.value)
    at = open_page()
    at.button_group(key="syntax_source").set_value("Upload").run()
    at.file_uploader(key="syntax_upload").set_value(("latin.conllu", data, "text/plain")).run()
    assert not at.exception
    assert errors(at) == [plain(str(exc.value))]


def test_long_sentences_are_skipped_and_counted_then_refused(default_model):
    long = [("w", "NOUN", 1, "dep")] * 600
    long[0] = ("w", "NOUN", 0, "root")
    at = open_page()
    at.button_group(key="syntax_source").set_value("Paste").run()
    at.text_area(key="syntax_paste").set_value(conllu(GOOD, long)).run()
    assert not at.exception and not errors(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Sentences"] == "1" and metrics["Skipped (too long)"] == "1"
    assert any("longer than" in w.value for w in at.warning)
    at.text_area(key="syntax_paste").set_value(conllu(long)).run()
    (msg,) = errors(at)
    assert "No sentence" in msg and str(default_model.max_length) in msg


def test_a_tokenizer_that_cannot_split_words_gives_one_message(monkeypatch):
    import analysis.syntax.words as W

    def refuse(*args, **kwargs):
        raise W.InputError(W.CANNOT_SPLIT)

    at = open_page()  # the sample first, with the real tokenizer call
    monkeypatch.setattr(W, "encode_words", refuse)
    at.button_group(key="syntax_source").set_value("Paste").run()
    at.text_area(key="syntax_paste").set_value(conllu(GOOD, GOOD, GOOD)).run()
    assert not at.exception
    assert errors(at) == [plain(W.CANNOT_SPLIT)]


def test_second_model_side_by_side_with_a_tiny_folder(tiny_model_dir, sample_ref):
    from analysis.core.models import load_model

    folder = str(tiny_model_dir("bert"))
    at = open_page()
    assert at.text_input(key="syntax_after").value == ""
    at.text_input(key="syntax_after").set_value(folder).run()
    assert not at.exception and not errors(at)
    diff = [d.value for d in at.dataframe if "difference (points)" in d.value.columns]
    assert len(diff) == 1
    df = diff[0].set_index("relation")
    ref = {r["relation"]: r for r in compare_rows(
        sample_ref, syntax_heads(load_model(folder), sample_treebank()), 10)}
    assert set(df.index) == set(ref)
    for rel in ("det", "nmod:poss", "all"):
        assert df.loc[rel, "before %"] == pytest.approx(100 * ref[rel]["before"], abs=0.05)
        assert df.loc[rel, "after %"] == pytest.approx(100 * ref[rel]["after"], abs=0.05)
        assert df.loc[rel, "difference (points)"] == pytest.approx(
            100 * ref[rel]["difference"], abs=0.1)
    assert any("after - before" in json.dumps(json.loads(c.proto.spec).get("title"))
               for c in at.get("vega_lite_chart"))

    # probes of both models: lines per layer (embeddings included) for each
    at.button(key="syntax_train_both").click().run()
    assert not at.exception and not errors(at)
    frames = [f for f in chart_frames(at) if "model" in f.columns and "metric" in f.columns]
    assert len(frames) == 1
    f = frames[0]
    assert sorted(f[f["model"] == "before"]["layer"].unique()) == list(range(7))
    assert sorted(f[f["model"] == "after"]["layer"].unique()) == list(range(3))
    assert set(f["metric"]) == {"UUAS", "distance Spearman", "root accuracy"}
    # the comparison's reading: both models' best share of the tree, in words
    best = f[f["metric"] == "UUAS"].groupby("model")["value"].max()
    text = " ".join(m.value for m in at.markdown).replace("\\:", ":")
    assert "The second model's word vectors hold" in text
    assert (f"at best the map finds {100 * best['after']:.0f}% of the tree's links" in text
            and f"against {100 * best['before']:.0f}% for the first model" in text)


def test_probes_train_on_click_and_draw_a_tree():
    at = open_page()
    assert not [c for c in chart_frames(at) if "metric" in c.columns]
    at.button(key="syntax_train").click().run()
    assert not at.exception and not errors(at)
    (f,) = [c for c in chart_frames(at) if "metric" in c.columns and "layer" in c.columns]
    assert sorted(f["layer"].unique()) == list(range(7))
    assert f["value"].between(-1, 1).all()
    # the reading names the chart's best layer and its share of the tree, in words
    uuas = f[f["metric"] == "UUAS"].sort_values(["value", "layer"], ascending=[False, True])
    layer, value = int(uuas["layer"].iloc[0]), float(uuas["value"].iloc[0])
    where = "the word vectors before any layer" if layer == 0 else f"layer {layer}"
    text = " ".join(m.value for m in at.markdown).replace("\\:", ":")  # shown literally
    assert f"does best on {where}: there it finds {100 * value:.0f}% of the tree's links" in text
    assert "UUAS" not in text.split("does best on")[1]
    trees = svgs(at)
    assert len(trees) == 2  # the heads example and the probe's tree
    assert 'class="dep-arc gold"' in trees[1] and 'class="dep-arc below' in trees[1]
    # the finished "Probes: 174 / 174" bar does not stay (nor come back on a rerun, issue 22)
    assert not at.get("progress")
    at.run()
    assert not at.get("progress")


def test_example_is_the_default_second_model_once_it_exists(monkeypatch):
    import ui.common.frame.models

    monkeypatch.setattr(ui.common.frame.models, "example_ready", lambda: True)
    at = open_page()
    assert at.text_input(key="syntax_after").value == "example"
    assert not at.exception


def test_demo_mode_lists_models_and_offers_no_hub_box(monkeypatch):
    monkeypatch.setenv("DASHBOARD_MODE", "demo")
    ui.server.settings.settings.cache_clear()
    at = open_page()
    assert at.button_group(key="syntax_source").options == ["Sample treebank", "Paste", "Upload"]
    assert not [t for t in at.text_input if t.key == "syntax_after"]
    box = at.selectbox(key="syntax_after_name")
    assert box.options == list(ui.server.settings.settings().models)
    assert at.number_input(key="syntax_max").max == ui.server.settings.settings().max_examples


def test_a_hub_dataset_that_is_not_there_gives_one_message():
    at = open_page()
    at.button_group(key="syntax_source").set_value("Hugging Face dataset").run()
    assert at.info and not errors(at)
    at.text_input(key="syntax_hf_name").set_value("no-such-owner/no-such-treebank").run()
    assert not at.exception
    (msg,) = errors(at)
    assert "no-such-treebank" in unescaped(msg) and "\n" not in msg
