"""Demo mode (DASHBOARD_MODE=demo, ui/server/settings.py): no widget or URL parameter can name,
read, probe or write a server path, the caps hold, and the same pages outside demo mode still take a
folder. Every spec that reaches the model layer is recorded: only the host's list may appear."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import analysis.core.models
import ui.drift.blocks
import ui.common.frame.resources
import ui.server.memory
import ui.server.settings
from builders import patch_everywhere
from ui.common.errors import plain
from ui.server.settings import DEFAULT_MODELS, SettingsError, load_settings
from ui.common.frame.sidebar import UNLISTED
from ui.common.frame.sidebar import leave_legacy_navigation as LEAVE_LEGACY

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
DEFAULT_NAME, EXAMPLE_NAME = list(DEFAULT_MODELS)
HOSTILE = ["/etc/passwd", "../../etc", "~/.ssh", "/nonexistent/model", "bert-base-uncased",
           "[Click here](https://example.com/login)", "![t](http://127.0.0.1:9/x.png)"]


# ---------------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="module")
def example_cache(tmp_path_factory, finetuned_copy):
    """A cache folder holding a ready 'example checkpoint' (a small fine-tuned copy of the
    default model with the example's card), so that demo pages open on it."""
    from builders import example_cache_from

    return example_cache_from(finetuned_copy, tmp_path_factory.mktemp("cache"))


@pytest.fixture
def specs_seen(monkeypatch):
    """Every spec that reaches path resolution or a checkpoint stamp (the only places that look
    at the file system for a model)."""
    seen: list[str] = []

    def wrap(fn):
        def recorder(spec, *a, **kw):
            seen.append(str(spec))
            return fn(spec, *a, **kw)
        return recorder

    # every module that holds them by name (ui.server.memory: the listed models' sizes)
    patch_everywhere(monkeypatch, analysis.core.models, "resolve_spec",
                     wrap(analysis.core.models.resolve_spec))
    patch_everywhere(monkeypatch, analysis.core.models, "checkpoint_stamp",
                     wrap(analysis.core.models.checkpoint_stamp))
    return seen


def _mode(monkeypatch, mode: str, cache: Path | None = None, settings_file: Path | None = None):
    import ui.common.frame.sidebar

    monkeypatch.setenv("DASHBOARD_MODE", mode)
    monkeypatch.setenv("DASHBOARD_EXAMPLE_AUTOBUILD", "0")
    if cache is not None:
        monkeypatch.setenv("DASHBOARD_CACHE", str(cache))
    if settings_file is not None:
        monkeypatch.setenv("DASHBOARD_SETTINGS", str(settings_file))
    else:
        monkeypatch.delenv("DASHBOARD_SETTINGS", raising=False)
    ui.server.settings.settings.cache_clear()
    # AppTest resets Streamlit's pages mode every run; a real server leaves it once (see
    # tests/test_page_noop.py)


@pytest.fixture
def demo(monkeypatch, example_cache):
    _mode(monkeypatch, "demo", example_cache)
    yield
    ui.server.settings.settings.cache_clear()


@pytest.fixture
def local(monkeypatch, example_cache):
    _mode(monkeypatch, "local", example_cache)
    yield
    ui.server.settings.settings.cache_clear()


def _open(page: str | None = None, **params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=240)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    if page:
        at.switch_page(page)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _attention(**params) -> AppTest:
    """The Attention page opened by a link (the app's first page is the Head atlas, which has
    no input box)."""
    at = AppTest.from_file(APP, default_timeout=240)
    for k, v in params.items():
        at.query_params[k] = v
    at.switch_page("pages/attention.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _texts(at) -> list[str]:
    """Everything the page says in words (messages, captions, Markdown, titles)."""
    out = []
    for kind in ("error", "warning", "info", "success", "caption", "markdown", "title",
                 "subheader"):
        out += [f"{kind}: {e.value}" for e in getattr(at, kind)]
    return out


def _card(at) -> str:
    return [m.value for m in at.sidebar.markdown if "model-card" in m.value][0]


def _listing(folder: Path) -> dict:
    return {str(p): p.stat().st_mtime_ns for p in folder.rglob("*")}


# ---------------------------------------------------------------------------------------------
# Settings


def test_settings_defaults_demo_and_local():
    demo = load_settings({"DASHBOARD_MODE": "demo"})
    assert demo.demo and demo.models == DEFAULT_MODELS and demo.datasets == {}
    assert (demo.max_epochs, demo.max_examples, demo.max_tokens, demo.max_upload_bytes,
            demo.max_line_chars, demo.max_gradient_examples, demo.queue_slots) == (
        3.0, 300, 256, 2 * 1024 * 1024, 2000, 32, 1)
    assert demo.cap("max_examples", 20000) == 300 and demo.cap("max_examples", 50) == 50
    local = load_settings({})
    assert not local.demo and local.max_examples is None and local.max_upload_bytes is None
    assert local.cap("max_examples", 20000) == 20000
    assert load_settings({"DASHBOARD_MODE": " Demo "}).demo
    assert not load_settings({"DASHBOARD_MODE": "local"}).demo


def test_settings_file(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text('max_examples = 50\nqueue_slots = 2\n[models]\n"BERT" = "bert-base-uncased"\n'
                 '"Mini" = "default"\n[datasets."IMDB reviews"]\nid = "imdb"\nsplit = "test"\n')
    s = load_settings({"DASHBOARD_MODE": "demo", "DASHBOARD_SETTINGS": str(f)})
    assert s.models == {"BERT": "bert-base-uncased", "Mini": "default"}
    assert s.default_model == "BERT" and s.model_name("default") == "Mini"
    assert s.max_examples == 50 and s.max_tokens == 256 and s.queue_slots == 2
    ds = s.datasets["IMDB reviews"]
    assert (ds.id, ds.split, ds.column, ds.pair) == ("imdb", "test", "text", None)
    # outside demo mode the file's caps apply only with caps_locally
    assert load_settings({"DASHBOARD_SETTINGS": str(f)}).max_examples is None
    f.write_text("max_examples = 50\ncaps_locally = true\n")
    local = load_settings({"DASHBOARD_SETTINGS": str(f)})
    assert local.max_examples == 50 and local.max_tokens is None
    assert local.public_url is None
    f.write_text('public_url = "https://demo.example.org/app/"\n')
    assert load_settings({"DASHBOARD_SETTINGS": str(f)}).public_url == \
        "https://demo.example.org/app"


@pytest.mark.parametrize("env, content, message", [
    ({"DASHBOARD_MODE": "demoo"}, None, "DASHBOARD_MODE must be 'demo' or 'local'"),
    ({}, "max_exampels = 5\n", "unknown key(s) max_exampels"),
    ({}, 'max_examples = "many"\n', "max_examples must be a whole number"),
    ({}, "max_examples = 0\n", "max_examples must be above 0"),
    ({}, "max_epochs = nan\n", "max_epochs must be a finite number"),
    ({}, "queue_slots = 0\n", "queue_slots must be from 1 to 64"),
    ({}, "[models]\n", "[models] must be a table"),
    ({}, "[datasets.x]\nsplit = 'test'\n", "datasets.x needs at least an id"),
    ({}, "max_examples = \n", "is not valid TOML"),
    ({}, 'public_url = "javascript:alert(1)"\n', "public_url must be an http:// or https://"),
    ({}, 'public_url = "https://a.example/?x=1"\n', "public_url must be an http:// or https://"),
    ({}, 'public_url = "https://user:pw@a.example/"\n', "public_url must be an http"),
    ({}, 'public_url = "http://"\n', "public_url must be an http:// or https://"),
    ({}, "public_url = 5\n", "public_url must be"),
])
def test_settings_errors_are_one_line(tmp_path, env, content, message):
    if content is not None:
        (tmp_path / "s.toml").write_text(content)
        env = {**env, "DASHBOARD_SETTINGS": str(tmp_path / "s.toml")}
    with pytest.raises(SettingsError) as err:
        load_settings(env)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_missing_settings_file_is_one_line(tmp_path):
    with pytest.raises(SettingsError, match="cannot read DASHBOARD_SETTINGS"):
        load_settings({"DASHBOARD_SETTINGS": str(tmp_path / "none.toml")})


def test_bad_mode_stops_the_app_with_one_line(monkeypatch):
    _mode(monkeypatch, "public")
    at = _open()
    assert [e.value for e in at.error] == [plain(
        "DASHBOARD_MODE must be 'demo' or 'local', not 'public'.")]
    assert not at.title
    ui.server.settings.settings.cache_clear()


# ---------------------------------------------------------------------------------------------
# The sidebar and links


def test_demo_sidebar_offers_the_host_list_only(demo, specs_seen, monkeypatch):
    import ui.common.frame.sidebar

    # widget changes on the app itself (no page switch): the app's own first-run handling
    monkeypatch.setattr(ui.common.frame.sidebar, "leave_legacy_navigation", LEAVE_LEGACY)
    at = _attention()  # a page with the input box
    assert [r.label for r in at.sidebar.radio] == ["Input"]  # no model source to choose
    assert not at.sidebar.text_input
    box = at.sidebar.selectbox(key="model")
    assert box.options == [DEFAULT_NAME, EXAMPLE_NAME] and box.value == DEFAULT_NAME
    assert not at.sidebar.info and not at.sidebar.error
    assert at.sidebar.caption[-1].value == ui.common.frame.sidebar.DEMO_NOTE
    box.set_value(EXAMPLE_NAME).run()
    assert not at.exception and not at.sidebar.error
    assert "Example ABSA checkpoint" in _card(at) and str(analysis.core.models.example_folder()) \
        not in _card(at)
    assert set(specs_seen) <= {"default", "example"}


@pytest.mark.parametrize("src", [None, "Local folder", "Hugging Face id"])
def test_demo_url_model_never_reaches_the_server(demo, specs_seen, tiny_model_dir, src):
    """A link's model= (with or without src=) that is not a listed name: one plain message,
    the same for an existing folder, a missing one and anything else; the default model; no
    spec outside the list is ever resolved or stamped; nothing written."""
    real = [str(tiny_model_dir("bert")), str(ROOT / "data"), str(ROOT)]
    before = _listing(Path(real[0]))
    seen_texts = set()
    for value in real + HOSTILE:
        at = _open(**({"src": src} if src else {}), model=value)
        assert [i.value for i in at.sidebar.info] == [plain(UNLISTED.format(name=DEFAULT_NAME))]
        assert not at.sidebar.error and not at.error
        assert "all-MiniLM-L6-v2" in _card(at) and "6 layers" in _card(at)
        seen_texts.add(tuple(_texts(at) + [i.value for i in at.sidebar.info]))
        assert value not in " ".join(_texts(at))
    assert len(seen_texts) == 1  # existing and missing paths read the same
    assert set(specs_seen) <= {"default", "example"}
    assert _listing(Path(real[0])) == before


def test_demo_caps_tokens_per_input(demo):
    at = _attention(a="food " * 600, view="Heatmap")
    assert any("truncated to the model's maximum of 256" in w.value for w in at.warning)
    assert at.sidebar.text_area(key="a").max_chars == 2000


def test_demo_src_alone_is_refused_the_same_way(demo, specs_seen):
    at = _open(src="Local folder")
    assert [i.value for i in at.sidebar.info] == [plain(UNLISTED.format(name=DEFAULT_NAME))]
    at = _open(model=EXAMPLE_NAME)
    assert not at.sidebar.info and "Example ABSA checkpoint" in _card(at)
    assert set(specs_seen) <= {"default", "example"}


def test_demo_model_loader_refuses_unlisted_specs_before_the_disk(demo, specs_seen,
                                                                  tiny_model_dir):
    from analysis.core.models import ModelLoadError
    from ui.common.frame.resources import NOT_OFFERED, get_model

    for spec in [str(tiny_model_dir("bert")), "/etc", "../../etc", "bert-base-uncased"]:
        with pytest.raises(ModelLoadError) as err:
            get_model(spec)
        assert str(err.value) == NOT_OFFERED
        with pytest.raises(ModelLoadError):
            ui.drift.blocks.model_pair("default", spec)
    assert specs_seen == []
    assert get_model("example").n_layers == 6 and specs_seen  # a listed one loads


def test_demo_links_carry_names_not_paths(demo, tiny_model_dir):
    from ui.common.frame.links import attention_link

    link = attention_link("example", "The food was great.", layer=2, head=3)
    assert "model=Example+ABSA+checkpoint" in link and "src=" not in link
    assert "model=" not in attention_link("default", "x")
    folder = str(tiny_model_dir("bert"))
    assert folder not in attention_link(folder, "x") and "model=" not in \
        attention_link(folder, "x")


def test_local_links_and_sidebar_still_take_folders(local, tiny_model_dir):
    from ui.common.frame.links import attention_link

    folder = str(tiny_model_dir("bert"))
    assert "src=Local+folder" in attention_link(folder, "x")
    assert "model=Example+ABSA+checkpoint" in attention_link("example", "x")
    at = _open(src="Local folder", model=folder)
    assert not at.sidebar.error and "2 layers &times; 4 heads" in _card(at)
    assert [r.options for r in at.sidebar.radio if r.key == "src"] == [
        ["Model list", "Hugging Face id", "Local folder"]]
    at = _open(model="/etc/passwd")  # no src: the list, which has no such name
    assert "not in the model list" in at.sidebar.info[0].value


# ---------------------------------------------------------------------------------------------
# Drift


def test_demo_drift_models_by_name_and_url_paths_refused(demo, specs_seen, tiny_model_dir):
    seen = set()
    for value in [str(tiny_model_dir("bert")), "/nonexistent/model", "../../etc"]:
        at = AppTest.from_file(APP, default_timeout=240)
        at.run()
        at.query_params["drift_after"] = value
        at.session_state["drift_max"] = 6
        at.switch_page("pages/drift.py")
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert not at.text_input  # no path box anywhere
        assert at.selectbox(key="drift_before_name").options == [
            "(the sidebar's model)", DEFAULT_NAME, EXAMPLE_NAME]
        assert at.selectbox(key="drift_after").value == EXAMPLE_NAME
        assert plain(ui.common.frame.models.UNLISTED) in [i.value for i in at.info]
        assert not at.error, [e.value for e in at.error]
        assert {m.label: m.value for m in at.metric}["Examples"] == "6"
        seen.add(tuple(t for t in _texts(at) if "Examples" not in t))
    assert len(seen) == 1
    assert set(specs_seen) <= {"default", "example"}


def test_demo_drift_opens_on_the_example_without_a_click(demo):
    at = _open("pages/drift.py")
    assert not at.error, [e.value for e in at.error]
    assert at.success and at.success[0].value.startswith("Most changed head")
    assert {m.label: m.value for m in at.metric}["Examples"] == "200"


def _said(at) -> str:
    """Every word a visitor can read on the page: messages, captions, Markdown, titles, widget
    labels, help and placeholders, and the download buttons' labels (a component's data)."""
    out = list(_texts(at))
    stack = [at._tree]
    while stack:
        node = stack.pop()
        stack.extend(getattr(node, "children", {}).values())
        proto = getattr(node, "proto", None)
        if proto is None:
            continue
        if getattr(node, "type", "") == "bidi_component":
            out.append(str(proto))
            continue
        for name in ("label", "help", "placeholder", "body"):
            value = getattr(proto, name, None)
            if isinstance(value, str):
                out.append(value)
    return "\n".join(out)


@pytest.mark.parametrize("page, params, downloads", [
    ("pages/aspects.py", {}, False),
    ("pages/syntax.py", {"syntax_max": "6"}, True),
    ("pages/noop.py", {"noop_max": "5", "noop_norms": "false"}, True),
    ("pages/attribution.py", {}, True),
])
def test_demo_pages_name_no_command_line_or_repository_path(demo, page, params, downloads):
    """Issue 35: a demo's visitors have no shell and no repository: no label or caption says
    "python -m", "the CLI" or a repository folder such as data/treebank."""
    text = _said(_open(page, **params))
    assert "1-indexed." in text or page != "pages/aspects.py"
    assert ("(JSON)" in text) == downloads  # the download labels are read
    for word in ("python -m", "CLI", "data/treebank", "data/sample_corpus"):
        assert word not in text, (page, word)


def _shown(at) -> str:
    """The words on the page itself: what :func:`_said` reads but the tooltips (help) and the
    components' data."""
    out = list(_texts(at))
    stack = [at._tree]
    while stack:
        node = stack.pop()
        stack.extend(getattr(node, "children", {}).values())
        proto = getattr(node, "proto", None)
        if proto is None or getattr(node, "type", "") == "bidi_component":
            continue
        for name in ("label", "placeholder", "body"):
            value = getattr(proto, name, None)
            if isinstance(value, str):
                out.append(value)
    return "\n".join(out)


@pytest.mark.parametrize("page, params", [
    ("pages/noop.py", {"noop_max": "5", "noop_norms": "false"}),
    ("pages/aspects.py", {}),
])
def test_local_pages_name_the_command_line_in_tooltips_only(local, page, params):
    """Issue 49: a first visitor of a local dashboard read "same schema as python -m analysis
    noop", "the CLI's JSON is 0-indexed", "as `head_mask` did", "(data/sample_corpus)": a
    command-line user finds them in the tooltips, the page's own words name none."""
    at = _open(page, **params)
    said, shown = _said(at), _shown(at)
    if page == "pages/noop.py":
        assert "same schema as python -m analysis noop" in said
        assert "data/sample_corpus/corpus.txt" in said
    else:
        assert "python -m analysis aspects heads counts them from 0" in said
    for word in ("python -m", "CLI", "data/sample_corpus", "data/treebank", "head_mask"):
        assert word not in shown, (page, word)


# ---------------------------------------------------------------------------------------------
# The corpus picker and the No-op page


def test_demo_corpus_has_no_dataset_box_and_caps(demo):
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    at.session_state["noop_max"] = 5000       # above the demo's 300: lowered, with a note
    at.session_state["noop_ngrad"] = 2000     # above the demo's 32
    at.session_state["noop_grads"] = False
    at.session_state["noop_norms"] = False
    at.switch_page("pages/noop.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.button_group(key="noop_source").options == ["Sample corpus", "Paste", "Upload"]
    assert not at.text_input
    cap, ngrad = at.number_input(key="noop_max"), at.number_input(key="noop_ngrad")
    assert (cap.value, cap.max, ngrad.value, ngrad.max) == (300, 300, 32, 32)
    captions = [c.value for c in at.caption]
    assert plain("Examples (at most): lowered to 300, this server's limit.") in captions
    assert plain("Examples for gradients: lowered to 32, this server's limit.") in captions
    assert {m.label: m.value for m in at.metric}["Examples"] == "292"  # the whole sample


def test_demo_paste_cuts_long_lines(demo):
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    at.session_state["noop_grads"] = False
    at.switch_page("pages/noop.py")
    at.run()
    at.button_group(key="noop_source").set_value("Paste").run()
    assert at.text_area(key="noop_paste").max_chars == 2 * 1024 * 1024
    at.text_area(key="noop_paste").input("The soup was cold.\n" + "food " * 1000).run()
    assert not at.exception and not at.error
    assert plain("Cut 1 example(s) longer than 2,000 characters to their first 2,000 "
                 "characters.") in [c.value for c in at.caption]
    assert {m.label: m.value for m in at.metric}["Examples"] == "2"


def _upload_page(name: str, data: bytes) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    at.session_state["noop_grads"] = False
    at.switch_page("pages/noop.py")
    at.run()
    at.button_group(key="noop_source").set_value("Upload").run()
    at.get("file_uploader")[0].set_value((name, data, "text/plain")).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("name", ["../../etc/passwd.txt", "/etc/passwd.txt",
                                  "..\\..\\windows\\x.txt", "~/.ssh/id.txt"])
def test_demo_upload_names_are_labels_only(demo, name):
    """The upload is read from its bytes; its name, whatever folders it names, is never
    opened: the corpus is the upload's three lines."""
    at = _upload_page(name, b"The soup was cold.\nThe staff were kind.\nWe stayed.\n")
    assert not at.error, [e.value for e in at.error]
    assert {m.label: m.value for m in at.metric}["Examples"] == "3"


def test_demo_upload_over_the_cap_is_refused(demo):
    at = _upload_page("big.txt", b"The soup was cold.\n" * 121_000)  # 2.2 MB
    assert len(at.error) == 1 and at.error[0].value.startswith(plain(
        "big.txt is 2.2 MB; files over 2 MB are refused"))
    assert not at.metric


def test_demo_hf_datasets_only_from_the_host_list(monkeypatch, example_cache, tmp_path):
    import ui.common.frame.corpus
    from analysis.core.corpus import make_dataset

    f = tmp_path / "s.toml"
    f.write_text('[datasets."Reviews"]\nid = "host/reviews"\nsplit = "test"\n')
    _mode(monkeypatch, "demo", example_cache, f)
    calls = []

    def fake_hf(name, split, column, pair=None, max_examples=None, max_chars=None,
                local_ok=True):
        calls.append((name, split, column, pair, max_examples, max_chars, local_ok))
        return make_dataset(["A fine review.", "A poor one."])

    monkeypatch.setattr(ui.common.frame.corpus, "read_hf_dataset", fake_hf)
    ui.common.frame.corpus._load_hf.clear()
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    at.session_state["noop_grads"] = False
    at.session_state["noop_source"] = "Hugging Face dataset"
    at.switch_page("pages/noop.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.text_input
    assert at.selectbox(key="noop_hf_pick").options == ["Reviews"]
    assert calls == [("host/reviews", "test", "text", None, 200, 2000, False)]
    assert {m.label: m.value for m in at.metric}["Examples"] == "2"
    ui.common.frame.corpus._load_hf.clear()
    ui.server.settings.settings.cache_clear()


def test_local_pages_keep_their_path_boxes(local, tiny_model_dir):
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    at.session_state["noop_source"] = "Hugging Face dataset"
    at.session_state["noop_grads"] = False
    at.switch_page("pages/noop.py")
    at.run()
    assert at.text_input(key="noop_hf_name").label == "Dataset id or folder"
    assert at.number_input(key="noop_max").max == 20000
    at = AppTest.from_file(APP, default_timeout=240)
    at.run()
    at.session_state["drift_max"] = 4
    at.switch_page("pages/drift.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.text_input(key="drift_before").value == ""
    # the after box left empty: the example checkpoint (ready in this cache folder)
    assert at.text_input(key="drift_after").value == "" and at.success
    assert {m.label: m.value for m in at.metric}["Examples"] == "4"
    at.text_input(key="drift_after").set_value(str(tiny_model_dir("bert"))).run()
    assert at.error[0].value.startswith(plain("The models have different shapes"))


# ---------------------------------------------------------------------------------------------
# What two visitors see in Chromium: the queue


@pytest.fixture
def demo_server(tmp_path):
    """A server in demo mode that allows long pasted corpora (so that one job lasts long enough
    for a second visitor to queue behind it)."""
    from browser_util import CHROMIUM, streamlit_server

    if not Path(CHROMIUM).exists():
        pytest.skip(f"Debian chromium is not installed ({CHROMIUM} is absent)")
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    conf = tmp_path / "settings.toml"
    conf.write_text("max_examples = 4000\nmax_upload_bytes = 400_000\n")
    with streamlit_server(env={"DASHBOARD_MODE": "demo", "DASHBOARD_SETTINGS": str(conf),
                               "DASHBOARD_EXAMPLE_AUTOBUILD": "0",
                               "DASHBOARD_CACHE": str(tmp_path / "cache")}) as url:
        yield url


# Records in window.__paused whether the page ever said its job was paused (the text is on the
# page only while the other job runs).
SEEN_PAUSED = """() => {
  window.__paused = false;
  const seen = () => document.body.textContent.includes(
    "Paused while another job of this queue takes its turn");
  new MutationObserver(() => { if (!window.__paused && seen()) window.__paused = true; })
    .observe(document.body, { subtree: true, childList: true, characterData: true });
}"""


@pytest.mark.browser
def test_second_visitor_waits_in_the_queue_in_chromium(demo_server):
    """Visitor A runs a long job (1,500 pasted lines); visitor B, whose own job is not cached,
    waits at most a turn (issue 50): A's job yields its slot at a step (A's bar says it is
    paused), B gets the result while A's job is still to finish, and A's job then ends;
    visitor C opens the Attention page meanwhile."""
    from playwright.sync_api import expect, sync_playwright

    from browser_util import _launch, _wait_idle, selectbox

    lines = "\n".join(f"The soup number {k} was cold, but the staff were kind." for k in
                      range(1500))
    with sync_playwright() as p:
        browser = _launch(p)
        try:
            a = browser.new_page(viewport={"width": 1400, "height": 1100})
            a.goto(demo_server + "/noop")
            _wait_idle(a, timeout=180_000)
            expect(a.get_by_test_id("stMetric").first).to_contain_text("200", timeout=120_000)
            cap = a.get_by_role("spinbutton", name="Examples (at most)")
            cap.fill("1500")
            cap.press("Enter")
            _wait_idle(a, timeout=180_000)
            a.get_by_test_id("stButtonGroup").get_by_text("Paste", exact=True).click()
            _wait_idle(a)
            box = a.get_by_role("textbox",
                                name="One example per line (a tab separates a sentence pair)")
            box.fill(lines)
            box.press("Control+Enter")
            expect(a.get_by_text("examples/s", exact=False).first).to_be_visible(timeout=60_000)

            # A's bar says it is paused only while B's job runs (a few seconds): a
            # MutationObserver records it, Playwright's expect polls only once a second
            a.evaluate(SEEN_PAUSED)
            b = browser.new_page(viewport={"width": 1400, "height": 1100})
            b.goto(demo_server + "/noop")  # the sample's 200 examples: cached, no queue
            expect(b.get_by_test_id("stMetric").first).to_contain_text("200", timeout=60_000)
            selectbox(b, "Batch size").click()
            b.get_by_role("option", name="32", exact=True).click()
            # A's job gives its slot to B's at a step once it has held it for a turn
            a.wait_for_function("window.__paused === true", polling="raf", timeout=60_000)

            c = browser.new_page(viewport={"width": 1400, "height": 1100})
            c.goto(demo_server + "/attention?view=Heatmap")
            expect(c.get_by_text("Strongest links:", exact=False)).to_be_visible(
                timeout=120_000)

            _wait_idle(b, timeout=300_000)
            assert b.get_by_text("waiting for 1 job(s) ahead of yours", exact=False).count() \
                == 0
            assert "200" in b.get_by_test_id("stMetric").first.inner_text()
            _wait_idle(a, timeout=300_000)
            assert "1500" in a.get_by_test_id("stMetric").first.inner_text()
        finally:
            browser.close()
