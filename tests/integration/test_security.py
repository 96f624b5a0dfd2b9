"""Hostile input everywhere but demo-mode paths (those are in the demo's tests): Markdown and
HTML shown as plain text (also in Chromium), size caps of every reader, long single lines and
large files within a memory bound, CLI options validated before any work (one stderr line,
exit 2, no output), read-only outputs, and checkpoint saving that never destroys what is not
a checkpoint: refusals, restore on a failed replacement, stale temp folders cleaned."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from analysis.absa import checkpoints as ck
from analysis.absa.readers import MAX_ABSA_BYTES, load_absa, read_aste
from analysis.core.corpus import (MAX_BYTES, corpus_notes, csv_columns, read_corpus, read_labels,
                             read_pasted)
from analysis.core.errors import DataError, InputError
from builders import one_line, patch_everywhere

ROOT = Path(__file__).resolve().parents[2]

# Markdown, HTML, links, images, icons, LaTeX, directives: all must show as typed.
HOSTILE = [
    "[Click here](https://example.com/login)",
    "![t](http://127.0.0.1:9/x.png)",
    "<b>x</b> <img src=x onerror=alert(1)> <https://example.com>",
    "**x** _y_ `z` ~~w~~",
    ":material/error: :material_home: :smile: :streamlit:",
    "$x^2$ and $$y$$",
    "see https://example.com, www.example.com and bob@example.com",
    ":red[red] :blue-badge[b] :help[h]",
    "# heading",
    "- item",
    "1. item",
    "a -> b <- c -- d >= e",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "    indented",
    "&amp; &lt;b&gt;",
    "[ref]\n\n[ref]: https://example.com",
    "back\\slash \\* end\\",
    "File not found: /tmp/x_y.txt (50 MB).",
]


# ---------------------------------------------------------------------------------------------
# Plain text in messages


def test_plain_escapes_every_markdown_construct():
    from ui.common.errors import WORD_JOINER, plain

    assert plain("[Click here](https://example.com/login)") == \
        f"\\[Click here\\](https\\:{WORD_JOINER}//example.com/login)"
    assert plain("![t](http://127.0.0.1:9/x.png)") == \
        f"!\\[t\\](http\\:{WORD_JOINER}//127.0.0.1\\:{WORD_JOINER}9/x.png)"
    assert plain("<b>x</b>") == "\\<b\\>x\\</b\\>"
    assert plain("**x**") == "\\*\\*x\\*\\*"
    assert plain("$x$") == "\\$x\\$"
    assert plain(":material/error:") == f"\\:{WORD_JOINER}material/error\\:"
    assert plain("# h\n- i\n2) j") == "\\# h\\\n\\- i\\\n2\\) j"
    assert plain("Plain words, stay.") == "Plain words, stay."
    # what a person reads is the input: CommonMark drops the backslash before punctuation and
    # a backslash at the end of a line is a line break; the joiners are invisible
    for text in HOSTILE:
        shown = re.sub(r"\\([!-/:-@\[-`{-~])|\\\n", lambda m: m.group(1) or "\n", plain(text))
        assert shown.replace(WORD_JOINER, "").replace("\u00a0", " ") == text


def test_show_error_shows_an_exception_as_plain_text():
    from streamlit.testing.v1 import AppTest

    from ui.common.errors import plain

    def script():
        from ui.common.errors import show_error

        show_error(ValueError("[Click here](https://example.com/login)\nsecond line"),
                   prefix="Model: ")

    at = AppTest.from_function(script).run()
    assert len(at.error) == 1
    assert at.error[0].value == plain("Model: [Click here](https://example.com/login)")


@pytest.mark.browser
def test_messages_show_literally_in_chromium(tmp_path):
    """Each hostile string in st.error (through ``plain``) renders as its own text: no link,
    no image, no icon, no formula, no request to the planted address. A control message without
    ``plain`` does make a link, so the check can fail."""
    from browser_util import CHROMIUM, _launch, _wait_idle, streamlit_server

    if not Path(CHROMIUM).exists():
        pytest.skip(f"Debian chromium is not installed ({CHROMIUM} is absent)")
    pw = pytest.importorskip("playwright.sync_api")
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(HOSTILE), encoding="utf-8")
    app = tmp_path / "app.py"
    app.write_text(
        "import json, sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "import streamlit as st\n"
        "from ui.common.errors import plain, show_error\n"
        f"for text in json.load(open({str(cases)!r})):\n"
        "    st.error(plain(text))\n"
        "show_error(ValueError('[Click here](https://example.com/login)'), prefix='Model: ')\n"
        "st.error('control: [Click here](https://example.com/login)')\n", encoding="utf-8")
    requests = []
    with streamlit_server(app, cwd=tmp_path) as url:
        with pw.sync_playwright() as p:
            browser = _launch(p)
            try:
                page = browser.new_page()
                page.on("request", lambda r: requests.append(r.url))
                page.goto(url)
                _wait_idle(page)
                boxes = page.locator("[data-testid='stAlertContentError'] "
                                     "[data-testid='stMarkdownContainer']")
                assert boxes.count() == len(HOSTILE) + 2
                seen = [boxes.nth(i).evaluate(
                    "e => ({text: e.innerText.replaceAll('\\u2060', ''), tags: [...new Set("
                    "[...e.querySelectorAll('*')].map(x => x.tagName.toLowerCase()))]})")
                    for i in range(boxes.count())]
            finally:
                browser.close()
    expected = HOSTILE + ["Model: [Click here](https://example.com/login)"]
    for want, got in zip(expected, seen):
        assert got["text"].replace("\u00a0", " ").strip() == want.strip(), want
        assert set(got["tags"]) <= {"p", "br", "div"}, (want, got["tags"])
    assert "a" in seen[-1]["tags"]  # the control: unescaped Markdown does make a link
    assert not [r for r in requests if "127.0.0.1:9/" in r or "example.com" in r]


# ---------------------------------------------------------------------------------------------
# Size caps of every reader


class Upload(io.BytesIO):  # what st.file_uploader hands over: name + size + read()
    def __init__(self, data: bytes, name: str, size: int | None = None):
        super().__init__(data)
        self.name, self.size = name, len(data) if size is None else size


def _sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as fh:  # nothing on disk
        fh.truncate(size)
    return path


def test_every_reader_refuses_a_file_over_its_cap_with_one_line(tmp_path):
    big = _sparse(tmp_path / "big.txt", MAX_BYTES + 1)
    absa = _sparse(tmp_path / "big_aste.txt", MAX_ABSA_BYTES + 1)
    cases = [
        (lambda: read_corpus(big), "50 MB"),
        (lambda: csv_columns(_sparse(tmp_path / "big.csv", MAX_BYTES + 1)), "50 MB"),
        (lambda: read_corpus(b"x" * 3000, name="u.txt", max_bytes=2000), "files over"),
        (lambda: read_corpus(Upload(b"tiny", "huge.jsonl", size=3 * 1024 * 1024),
                             max_bytes=2 * 1024 * 1024), "huge.jsonl is 3 MB"),
        (lambda: read_corpus(Upload(b"y\n" * 1500, "liar.txt", size=10), max_bytes=2000),
         "liar.txt"),  # a size attribute that lies: the read itself is capped
        (lambda: read_pasted("z\n" * 1500, max_bytes=2000), "The pasted text"),
        (lambda: load_absa(absa), "20 MB"),
        (lambda: read_aste(absa), "20 MB"),
        (lambda: load_absa(b"{}" * 2000, name="a.json", max_bytes=2000), "files over"),
        (lambda: read_labels(b"x" * 3000, read_pasted("x"), name="l.jsonl", max_bytes=2000),
         "files over"),
    ]
    for call, needle in cases:
        with pytest.raises(DataError) as exc:
            call()
        assert needle in one_line(exc), (needle, one_line(exc))


def test_long_lines_are_cut_and_counted_in_every_corpus_reader(tmp_path):
    long = "word " * 1000  # 5,000 characters
    note = "Cut 1 example(s) longer than 300 characters to their first 300 characters."
    files = {
        "c.txt": f"short\n{long}\tpair\n",
        "c.jsonl": json.dumps({"text": "short"}) + "\n" + json.dumps({"text": long}) + "\n",
        "c.csv": f'text\nshort\n"{long}"\n',
        "c.xml": f"<sentences><sentence><text>short</text></sentence><sentence><text>{long}"
                 "</text></sentence></sentences>",
    }
    for name, content in files.items():
        ds = read_corpus(content.encode(), name=name, max_chars=300)
        assert ds["text"][0] == "short" and len(ds["text"][1]) <= 300
        assert ds["text"][1] == long[:300].rstrip()
        assert corpus_notes(ds) == [note], name
    ds = read_pasted(f"a\n{long}", max_chars=300)
    assert corpus_notes(ds) == [note] and len(ds["text"][1]) <= 300
    # the labels of a cut example still line up with it
    data = (json.dumps({"text": long, "label": "pos"}) + "\n").encode()
    labels, why = read_labels(data, read_corpus(data, name="l.jsonl", max_chars=300),
                              name="l.jsonl")
    assert labels == ["pos"] and why == ""


MEASURE = r"""
import json, resource, sys
from transformers import AutoTokenizer
from analysis.core.models import default_model_path
tok = AutoTokenizer.from_pretrained(default_model_path())
tok("warm up the tokenizer")
def rss_mb():
    return int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize() / 2**20
before = rss_mb()
out = {}
kind, path = sys.argv[1], sys.argv[2]
if kind == "corpus":
    from analysis.core.corpus import corpus_notes, read_corpus
    from analysis.core.encoding import encode_dataset
    ds = read_corpus(path)
    c = encode_dataset(tok, ds, max_length=512)
    out = {"notes": corpus_notes(ds), "n_tokens": c.encodings[0].n_tokens,
           "truncated": c.truncated}
elif kind == "encode":
    from analysis.core.encoding import encode
    e = encode(tok, open(path, encoding="utf-8").read(), max_length=512)
    out = {"notes": e.notices, "n_tokens": e.n_tokens, "n_full": e.n_tokens_full}
else:
    from analysis.absa.readers import read_aste
    ds = read_aste(path)
    out = {"notes": ds.info.description.splitlines(), "n": len(ds)}
# VmHWM: this process's own peak (ru_maxrss would carry the parent's peak over the fork)
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0]
out["growth_mb"] = int(hwm.split()[1]) / 1024 - before
print(json.dumps(out))
"""


def _measure(kind: str, path: Path) -> dict:
    proc = subprocess.run([sys.executable, "-c", MEASURE, kind, str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def long_text() -> str:
    """About 20 MB of words on one line (4.5 million tokens for the default model)."""
    words = ("the food was great but the service was slow and the room was loud " * 300_000)
    return words[:20_000_000]


def test_a_20_mb_single_line_upload_stays_within_a_memory_bound(tmp_path, long_text):
    """Before: 4.1 GB and 49 s in the tokenizer. The reader cuts the line before tokenising and
    says so; peak memory grows by a few times the file, not by gigabytes."""
    f = tmp_path / "one.jsonl"
    f.write_text(json.dumps({"text": long_text}) + "\n", encoding="utf-8")
    got = _measure("corpus", f)
    assert got["notes"] == ["Cut 1 example(s) longer than 10,000 characters to their first "
                            "10,000 characters."]
    assert got["n_tokens"] == 512 and got["truncated"] == 1
    assert got["growth_mb"] < 700, got  # imports included; before: 4.1-6.1 GB


def test_encode_tokenises_only_what_the_model_can_use(tmp_path, long_text):
    f = tmp_path / "one.txt"
    f.write_text(long_text, encoding="utf-8")
    got = _measure("encode", f)
    assert got["n_tokens"] == 512
    exact = len(long_text.split()) + 2  # one token per word here, and [CLS] [SEP]
    assert abs(got["n_full"] - exact) < 0.02 * exact  # estimated from the kept prefix
    assert got["notes"][-1].startswith("The input has about ")
    assert "truncated to the model's maximum of 512" in got["notes"][-1]
    assert got["growth_mb"] < 700, got  # imports included; before: 4.1-6.1 GB


def test_an_aste_line_bomb_is_skipped_not_parsed(tmp_path):
    """One 19 MB line of a million triplets cost 6 GB in ast.literal_eval; it is skipped and
    counted before parsing."""
    f = tmp_path / "bomb.txt"
    with open(f, "w", encoding="utf-8") as fh:
        fh.write("Good food .####[([1], [0], 'POS')]\n")
        fh.write("the food was great ####[" + ", ".join(["([1], [3], 'POS')"] * 1_000_000)
                 + "]\n")
    got = _measure("aste", f)
    assert got["n"] == 1
    assert got["notes"] == ["Skipped 1 sentence(s) longer than 10,000 characters."]
    assert got["growth_mb"] < 700, got  # imports included; before: 4.1-6.1 GB


def test_hugging_face_names_that_are_paths_are_refused_when_local_files_are_off(tmp_path):
    from analysis.core.corpus import read_hf_dataset

    folder = tmp_path / "my_ds"
    folder.mkdir()
    (folder / "train.jsonl").write_text(json.dumps({"text": "secret"}), encoding="utf-8")
    assert read_hf_dataset(str(folder), "train", "text")["text"] == ["secret"]  # local use
    messages = set()
    for name in (str(folder), str(tmp_path / "missing"), "../my_ds", "~/x", "a/b/c", "/etc",
                 "..", "C:\\x"):
        with pytest.raises(DataError) as exc:
            read_hf_dataset(name, "train", "text", local_ok=False)
        messages.add(one_line(exc))
    assert len(messages) == 1 and "local folders and files are not read" in messages.pop()


def test_streamed_xml_keeps_one_sentence_in_memory():
    from analysis.core.corpus.xml import iter_xml

    xml = ("<sentences>" + "".join(f"<sentence id='{i}'><text>s{i}</text></sentence>"
                                   for i in range(500)) + "</sentences>").encode()
    root, texts = None, []
    for event, el in iter_xml(xml, "x.xml", release=("sentence",)):
        if event == "start" and root is None:
            root = el
        if event == "end" and el.tag == "sentence":
            texts.append(el.findtext("text"))
            # the parser reads ahead, but every sentence already handled left the tree
            assert min(int(c.get("id")) for c in root) == len(texts) - 1
    assert texts == [f"s{i}" for i in range(500)] and len(root) == 0


def test_semeval16_with_a_long_leading_comment_is_not_taken_for_semeval14():
    from analysis.core.corpus.files import sniff_format

    xml = ("<?xml version='1.0'?>\n<!-- " + "licence text " * 600 + "-->\n"
           "<Reviews><Review rid='1'><sentences><sentence id='1:0'><text>Great food.</text>"
           "<Opinions><Opinion target='food' category='FOOD#QUALITY' polarity='positive' "
           "from='6' to='10'/></Opinions></sentence></sentences></Review></Reviews>").encode()
    assert xml.index(b"<Reviews") > 4000
    assert sniff_format("s16.xml", head=xml) == "semeval16"
    ds = load_absa(xml, name="s16.xml")
    assert ds[0]["terms"][0]["term"] == "food" and ds[0]["source"] == "semeval16"


# ---------------------------------------------------------------------------------------------
# CLI: every option checked before any work


def _run(argv, capsys):
    from analysis.cli import main

    rc = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    return rc, err


BAD = [
    (["--epochs", "nan"], "--epochs must be a finite number above 0, not 'nan'"),
    (["--epochs", "inf"], "--epochs must be"),
    (["--epochs", "-1"], "--epochs must be"),
    (["--epochs", "0"], "--epochs must be"),
    (["--batch-size", "0"], "--batch-size must be a whole number of at least 1, not '0'"),
    (["--lr", "nan"], "--lr must be"),
    (["--lr", "0"], "--lr must be"),
    (["--lr=-1e-5"], "--lr must be"),
    (["--max-length", "0"], "--max-length must be"),
    (["--heldout", "1"], "--heldout must be a number from 0 up to (not including) 1"),
    (["--heldout", "-0.1"], "--heldout must be"),
    (["--heldout", "nan"], "--heldout must be"),
    (["--seed", "-1"], "--seed must be"),
]


@pytest.mark.parametrize("extra,needle", BAD)
def test_cli_finetune_refuses_bad_options_before_any_work(tmp_path, capsys, monkeypatch,
                                                          extra, needle):
    import analysis.core.models

    def no_work(*a, **k):
        raise AssertionError("work started although an option is bad")

    patch_everywhere(monkeypatch, analysis.core.models, "load_model", no_work, ("analysis",))
    out = tmp_path / "ck"
    rc, err = _run(["finetune", "--data", "sample", "--task", "qa_m", "--out", str(out),
                    *extra], capsys)
    assert rc == 2 and len(err) == 1 and err[0].startswith(f"error: {needle}"), err
    assert list(tmp_path.iterdir()) == []


def test_cli_max_length_is_checked_against_the_model_before_training(tmp_path, capsys,
                                                                     monkeypatch):
    from analysis.absa import pipeline

    def no_training(*a, **k):
        raise AssertionError("trained although --max-length is too large")

    monkeypatch.setattr(pipeline, "fine_tune", no_training)
    rc, err = _run(["finetune", "--data", "sample", "--task", "qa_m", "--max-length", "100000",
                    "--out", str(tmp_path / "ck")], capsys)
    assert rc == 2 and err == [
        "error: --max-length must be from 5 to 512 (this model's maximum), not 100000."]
    assert list(tmp_path.iterdir()) == []


COMMANDS = {  # command line with a missing model: validation must answer first
    "noop": ["noop", "--data", "data/sample_corpus/corpus.txt", "--model", "/no/model"],
    "drift": ["drift", "--after", "/no/model", "--data", "data/sample_corpus/corpus.txt"],
    "heads": ["aspects", "heads", "--model", "/no/model", "--data", "sample"],
    "evaluate": ["aspects", "evaluate", "--model", "/no/model", "--data", "sample", "--task",
                 "qa_m"],
}
BAD_OTHER = [
    ("noop", ["--max-examples", "0"], "--max-examples must be a whole number of at least 1"),
    ("noop", ["--batch-size", "-3"], "--batch-size must be"),
    ("drift", ["--max-examples", "0"], "--max-examples must be"),
    ("drift", ["--vertical", "2"], "--vertical must be a number from 0 to 1, not '2'"),
    ("drift", ["--block", "nan"], "--block must be"),
    ("drift", ["--mixed", "-0.1"], "--mixed must be"),
    ("heads", ["--top-k", "0"], "--top-k must be a whole number of at least 1, not '0'"),
    ("heads", ["--top-k", "-2"], "--top-k must be"),
    ("heads", ["--max-sentences", "0"], "--max-sentences must be"),
]


@pytest.mark.parametrize("command,extra,needle", BAD_OTHER)
def test_cli_other_commands_refuse_bad_options_first(tmp_path, capsys, command, extra, needle):
    out = tmp_path / "o.json"
    rc, err = _run(COMMANDS[command] + extra + ["--out", str(out)], capsys)
    assert rc == 2 and len(err) == 1 and err[0].startswith(f"error: {needle}"), err
    assert not out.exists()


@pytest.fixture
def read_only_dir(tmp_path):
    """A folder nobody can write in: chmod for a normal user, the immutable flag for root
    (root ignores permission bits)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("running as root without chattr +i: no read-only folder to test with")
    try:
        yield folder
    finally:
        subprocess.run(["chattr", "-i", str(folder)], capture_output=True)


def test_cli_refuses_a_read_only_out_before_any_work(read_only_dir, capsys, monkeypatch):
    import analysis.core.models

    patch_everywhere(monkeypatch, analysis.core.models, "load_model",
                     lambda *a, **k: pytest.fail("work started with a read-only --out"),
                     ("analysis",))
    runs = [
        ["attention", "--text", "hi", "--out", str(read_only_dir / "m.npz")],
        COMMANDS["noop"] + ["--out", str(read_only_dir / "s.json")],
        COMMANDS["drift"] + ["--out", str(read_only_dir / "d.json")],
        COMMANDS["heads"] + ["--out", str(read_only_dir / "h.json")],
        COMMANDS["evaluate"] + ["--out", str(read_only_dir / "e.json")],
        ["finetune", "--data", "sample", "--task", "qa_m", "--out", str(read_only_dir / "ck")],
    ]
    for argv in runs:
        rc, err = _run(argv, capsys)
        assert rc == 2 and len(err) == 1, (argv, err)
        assert err[0].startswith("error: --out ") and "not writable" in err[0], err
    assert list(read_only_dir.iterdir()) == []


def test_cli_out_in_a_missing_folder_or_a_folder(tmp_path, capsys):
    rc, err = _run(COMMANDS["noop"] + ["--out", str(tmp_path / "no" / "s.json")], capsys)
    assert rc == 2 and err[0].startswith("error: --out names a folder that does not exist")
    (tmp_path / "d.json").mkdir()
    rc, err = _run(COMMANDS["noop"] + ["--out", str(tmp_path / "d.json")], capsys)
    assert rc == 2 and err[0].startswith("error: --out is a folder, not a .json file")


def test_cli_write_failure_after_the_work_is_one_line(tmp_path, capsys, monkeypatch,
                                                      tiny_checkpoint):
    """An output that fails at the very end (disk full, a file system turned read-only) ends
    with one line, not a traceback."""
    from analysis.cli import aspects as cli_aspects

    def full(*a, **k):
        raise OSError(28, "No space left on device", str(tmp_path / "m.json"))

    monkeypatch.setattr(cli_aspects, "_write", full)
    ckpt = tiny_checkpoint
    rc, err = _run(["aspects", "heads", "--model", str(ckpt), "--data", "sample",
                    "--max-sentences", "2", "--out", str(tmp_path / "m.json")], capsys)
    # (the progress bar shares stderr; the error is its last line, with no traceback)
    assert rc == 2 and err[-1] == f"error: No space left on device: {tmp_path / 'm.json'}"
    assert not [line for line in err if "Traceback" in line or line.startswith("error") and
                line != err[-1]]


# ---------------------------------------------------------------------------------------------
# Checkpoint saving


class FakeModel:
    """Writes what a model's save_pretrained writes (small), optionally failing."""

    def __init__(self, weights: bytes = b"new", fail: bool = False):
        self.weights, self.fail = weights, fail

    def save_pretrained(self, path, safe_serialization=True):
        Path(path, "config.json").write_text("{}")
        Path(path, "model.safetensors").write_bytes(self.weights)
        if self.fail:
            raise RuntimeError("disk full")


class FakeTokenizer:
    def save_pretrained(self, path):
        Path(path, "tokenizer.json").write_text("{}")


def _fake_checkpoint(folder: Path, weights: bytes = b"old") -> Path:
    return ck.save_checkpoint(FakeModel(weights), FakeTokenizer(), folder,
                              {"kind": "absa-sentence-pair", "task": "qa_m"})


def test_save_refuses_anything_that_is_not_a_checkpoint(tmp_path):
    card = {"kind": "absa-sentence-pair", "task": "qa_m"}
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine")
    other = tmp_path / "other"
    other.mkdir()
    (other / "thesis.tex").write_text("mine")
    mixed = _fake_checkpoint(tmp_path / "mixed")
    (mixed / "notes.txt").write_text("mine too")
    nested = _fake_checkpoint(tmp_path / "nested")
    (nested / "sub").mkdir()
    for target, needle in [(a_file, "is not an ABSA checkpoint"),
                           (other, "is not an ABSA checkpoint"),
                           (mixed, "holds files that are not part of a checkpoint (notes.txt)"),
                           (nested, "holds files that are not part of a checkpoint (sub)")]:
        with pytest.raises(InputError) as exc:
            ck.save_checkpoint(FakeModel(), FakeTokenizer(), target, card)
        assert needle in one_line(exc)
    assert a_file.read_text() == "mine" and (other / "thesis.tex").read_text() == "mine"
    assert (mixed / "notes.txt").read_text() == "mine too"
    assert (mixed / "model.safetensors").read_bytes() == b"old"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    # an earlier checkpoint and an empty folder are replaced
    done = ck.save_checkpoint(FakeModel(b"v2"), FakeTokenizer(), tmp_path / "empty", card)
    assert (done / "model.safetensors").read_bytes() == b"v2"
    ck.save_checkpoint(FakeModel(b"v3"), FakeTokenizer(), done, card)
    assert (done / "model.safetensors").read_bytes() == b"v3"
    assert json.loads((done / ck.CARD_NAME).read_text()) == card


def test_a_failed_replacement_restores_the_old_checkpoint(tmp_path, monkeypatch):
    card = {"kind": "absa-sentence-pair", "task": "qa_m"}
    out = _fake_checkpoint(tmp_path / "model")
    real_rename = os.rename

    # 1. the atomic exchange itself fails: nothing moved
    def broken_exchange(a, b):
        raise OSError(5, "Input/output error", str(b))

    monkeypatch.setattr(ck, "_exchange", broken_exchange)
    with pytest.raises(OSError):
        ck.save_checkpoint(FakeModel(b"new"), FakeTokenizer(), out, card)
    assert (out / "model.safetensors").read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]

    # 2. no exchange on this system: the old folder is moved aside, the new one fails to
    # move in, and the old one is put back
    monkeypatch.setattr(ck, "_exchange", lambda a, b: False)

    def rename(src, dst):
        if Path(src).name.startswith(".model.tmp-"):
            raise OSError(28, "No space left on device", str(dst))
        return real_rename(src, dst)

    monkeypatch.setattr(ck.os, "rename", rename)
    with pytest.raises(OSError, match="No space left"):
        ck.save_checkpoint(FakeModel(b"new"), FakeTokenizer(), out, card)
    assert (out / "model.safetensors").read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]

    # 3. the same path works when the rename does
    monkeypatch.setattr(ck.os, "rename", real_rename)
    ck.save_checkpoint(FakeModel(b"new"), FakeTokenizer(), out, card)
    assert (out / "model.safetensors").read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_a_crash_while_writing_keeps_the_old_checkpoint(tmp_path):
    out = _fake_checkpoint(tmp_path / "model")
    with pytest.raises(RuntimeError, match="disk full"):
        ck.save_checkpoint(FakeModel(b"half", fail=True), FakeTokenizer(), out,
                           {"kind": "absa-sentence-pair", "task": "qa_m"})
    assert (out / "model.safetensors").read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_stale_temp_folders_are_cleaned_by_the_next_save(tmp_path):
    hour_ago = time.time() - ck.STALE_SECONDS - 60

    def temp(name: str, files=("config.json", "model.safetensors"), age=hour_ago) -> Path:
        p = tmp_path / name
        p.mkdir()
        for f in files:
            (p / f).write_bytes(b"x" * 10)
        os.utime(p, (age, age))
        return p

    killed = temp(".model.tmp-k1ll3d")                     # a save killed mid-way: removed
    other = temp(".other.tmp-abc123", files=("config.json",))  # another target's: removed
    fresh = temp(".model.tmp-n0w", age=time.time())        # a save running right now: kept
    foreign = temp(".model.tmp-mine", files=("thesis.tex",))  # not ours: kept
    lost = temp(".gone.old-1-2", files=("config.json", ck.CARD_NAME))  # its target is
    # missing: put back where it was
    plain_dir = temp("notes", files=("a.txt",))             # no temp name: kept
    ck.save_checkpoint(FakeModel(), FakeTokenizer(), tmp_path / "model",
                       {"kind": "absa-sentence-pair", "task": "qa_m"})
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(["model", fresh.name, foreign.name, "gone", plain_dir.name])
    assert not killed.exists() and not other.exists() and not lost.exists()
    assert (tmp_path / "gone" / ck.CARD_NAME).is_file()
