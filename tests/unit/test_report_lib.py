"""analysis.report: cleaned SVG, findings and their JSON round trip, provenance, the offline
HTML and the Markdown + PNG zip."""

import io
import json
import re
import zipfile

import altair as alt
import pandas as pd
import pytest
import vl_convert as vlc

from analysis.core.errors import DataError
from analysis.report import (Finding, Report, clean_svg, package_versions, report_from_json,
                             to_html, to_markdown_zip, weights_hash)

XSS = "<img src=x onerror=alert(1)>"


def _svg(title="Attention to [SEP] per layer"):
    df = pd.DataFrame({"layer": [1, 2, 3], "value": [0.25, 0.5, 0.125]})
    chart = alt.Chart(df).mark_bar().encode(x="layer:O", y="value:Q").properties(title=title)
    return vlc.vegalite_to_svg(chart.to_json())


def _report():
    f1 = Finding(title="Layer 3 looks at [SEP]", kind="chart", caption="Mostly [SEP]. " + XSS,
                 page="No-op statistics", link="http://localhost:8501/noop?noop_max=20",
                 numbers={"Examples": "20", "Mean": "0.292"}, svg=_svg(),
                 reading=["In layer 2 more than half of all attention goes to [SEP]."],
                 source={"model": "all-MiniLM-L6-v2 (embedded)", "weights sha256": "ab" * 32})
    f2 = Finding.from_frame("No-op heads", pd.DataFrame(
        {"layer": [1, 2], "head": [3, 4], "share": [0.51234, float("nan")], "name": [XSS, "b|c"]}),
        page="No-op statistics", link="./noop?noop_max=20")
    return Report(title="My findings", findings=[f1, f2])


def test_clean_svg_keeps_marks_and_drops_everything_active():
    hostile = ("<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)' width='10'>"
               "<script>alert(1)</script><a href='javascript:alert(1)'><rect width='5'/></a>"
               "<image href='http://evil.example/x.png'/><foreignObject><div>x</div>"
               "</foreignObject><rect width='4' fill='url(http://evil.example/p)' "
               "onclick='x()'/><rect clip-path='url(#clip1)' width='3'/>"
               "<text x='1'>&lt;b&gt;tok&lt;/b&gt;</text><style>@import url(http://e)</style></svg>")
    out = clean_svg(hostile)
    assert not re.search(r"script|onload|onclick|href|image|foreignObject|evil|style|http://e",
                         out.replace("http://www.w3.org/2000/svg", ""))
    assert out.count("<rect") == 2 and "url(#clip1)" in out and "&lt;b&gt;tok" in out
    real = clean_svg(_svg())
    assert real.count("<path") >= 3 and "Attention to [SEP] per layer" in real
    for bad in ("", "not xml", "<html></html>",
                "<!DOCTYPE x [<!ENTITY a 'b'>]><svg>&a;</svg>"):
        with pytest.raises(DataError):
            clean_svg(bad)


def test_json_round_trip_and_checks():
    rep = _report()
    back = report_from_json(rep.json_text())
    assert back.to_json() == rep.to_json()
    assert back.findings[1].rows[0][2] == pytest.approx(0.51234)
    assert back.findings[1].rows[1][2] is None  # NaN -> empty
    raw = json.loads(rep.json_text())
    raw["findings"][0]["link"] = "javascript:alert(1)"
    raw["findings"][0]["svg"] = "<svg><script>alert(1)</script><rect width='1'/></svg>"
    got = report_from_json(json.dumps(raw))
    assert got.findings[0].link == "" and "script" not in got.findings[0].svg
    for bad, msg in ((b"\xff\xfe", "not JSON"), (b"[]", "not a report"),
                     (json.dumps({**raw, "version": 9}).encode(), "version 9"),
                     (json.dumps({**raw, "findings": [1]}).encode(), "not an object"),
                     (json.dumps({**raw, "findings": [{"kind": "video"}]}).encode(), "kind"),
                     (json.dumps({**raw, "findings": [{"rows": [1]}]}).encode(), "bad table"),
                     (json.dumps({**raw, "findings": [{}] * 61}).encode(), "at most 60"),
                     (b" " * (26 * 2**20), "larger than 25 MB")):
        with pytest.raises(DataError, match=msg):
            report_from_json(bad)


def test_the_report_study_reopens_a_saved_report_under_the_servers_cap():
    from analysis.report import STUDY
    from analysis.report.study import Inputs

    rep = _report()
    data = rep.json_text().encode()
    assert list(rep.to_json()) == list(STUDY.result.SCHEMA.names)
    assert STUDY.run(Inputs(data)).to_json() == rep.to_json()
    with pytest.raises(DataError, match="larger than 0.1 MB"):  # a server's lower cap
        STUDY.run(Inputs(data + b" " * 2**17, max_bytes=2**17))


def test_html_is_offline_and_holds_every_number_and_link():
    html = to_html(_report(), versions={"python": "3.11.7", "torch": "2.13.0"},
                   exported="2026-01-01 10:00 UTC")
    # nothing is loaded from anywhere: no script, no src, no external stylesheet; a CSP forbids it
    assert "<script" not in html and "<link" not in html and "<img" not in html
    assert not re.search(r"<[^>]*\s(src|href)=['\"](?!http://localhost:8501/noop)", html)
    assert "default-src 'none'" in html
    urls = set(re.findall(r"https?://[^\s'\"<>)]+", html)) - {"http://www.w3.org/2000/svg"}
    assert urls == {"http://localhost:8501/noop?noop_max=20"}
    assert "<a href='http://localhost:8501/noop?noop_max=20'>" in html
    assert "<code>./noop?noop_max=20</code>" in html
    assert XSS not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "0.512" in html and "0.292" in html and "<dd>20</dd>" in html
    assert html.count("<svg") == 1 and "In layer 2 more than half" in html
    assert "ab" * 32 in html and "2.13.0" in html and "2026-01-01 10:00 UTC" in html


def test_markdown_zip_has_png_images_tables_and_json():
    data = to_markdown_zip(_report(), versions={"python": "3.11.7"})
    z = zipfile.ZipFile(io.BytesIO(data))
    assert sorted(z.namelist()) == ["images/finding-01.png", "report.json", "report.md"]
    png = z.read("images/finding-01.png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000
    md = z.read("report.md").decode()
    assert "![Layer 3 looks at \\[SEP\\]](images/finding-01.png)" in md
    assert "| 1 | 3 | 0.512 | \\<img src=x onerror=alert(1)\\> |" in md
    assert "| 2 | 4 |  | b\\|c |" in md
    assert "<http://localhost:8501/noop?noop_max=20>" in md
    assert report_from_json(z.read("report.json")).findings[0].title == "Layer 3 looks at [SEP]"


def test_weights_hash_tells_weights_apart(tiny_model_dir):
    import torch
    from transformers import AutoModel

    a = AutoModel.from_pretrained(tiny_model_dir("bert"))
    b = AutoModel.from_pretrained(tiny_model_dir("bert"))
    assert weights_hash(a) == weights_hash(b) and len(weights_hash(a)) == 64
    with torch.no_grad():
        b.encoder.layer[0].attention.self.query.weight[0, 0] += 1e-3
    assert weights_hash(a) != weights_hash(b)
    v = package_versions()
    assert v["torch"] == torch.__version__.split("+")[0] or v["torch"].startswith(
        torch.__version__.split("+")[0])


def test_glossary_doc_matches_the_module_and_terms_are_found():
    from pathlib import Path

    from analysis.report import GLOSSARY, terms_in

    doc = (Path(__file__).resolve().parents[2] / "docs" / "GLOSSARY.md").read_text()
    for term, text in GLOSSARY.items():
        assert f"- **{term}**: {text}" in doc
    assert terms_in("QA-M and NLI-M heads; RSA, CKA; entropy in nats; UUAS") == [
        "entropy", "nats", "QA-M", "NLI-M", "RSA", "CKA", "UUAS"]
    assert terms_in("the layers and the [SEP] token") == ["token", "[SEP]"]  # not "layer"


def test_percent_columns_keep_one_decimal():
    rep = Report(findings=[Finding(title="t", kind="table", columns=["relation", "accuracy %",
                                                                     "score"],
                                   rows=[["det", 89.4, 0.51234]])])
    html = to_html(rep, versions={})
    assert "<td class='n'>89.4</td>" in html and "<td class='n'>0.512</td>" in html


def test_two_models_of_one_name_keep_their_own_weights_hash(tiny_model_dir, monkeypatch):
    """Every in-session fine-tune is called "fine-tuned": a finding of one must not carry the
    hash of another's weights (a cache keyed by name did); each model is hashed once."""
    from types import SimpleNamespace

    import torch
    from transformers import AutoModel

    import analysis.report.provenance as prov

    a = AutoModel.from_pretrained(tiny_model_dir("bert"))
    b = AutoModel.from_pretrained(tiny_model_dir("bert"))
    with torch.no_grad():
        b.encoder.layer[0].attention.self.query.weight[0, 0] += 1e-3
    calls = []
    real = prov.weights_hash
    monkeypatch.setattr(prov, "weights_hash", lambda m: calls.append(m) or real(m))

    def loaded(model):
        return SimpleNamespace(name="fine-tuned", spec="fine-tuned", model=model,
                               model_type="bert", n_layers=2, n_heads=2)

    from ui.common.exports.findings import model_lines  # what the pages' "Add to report" calls

    first, second = model_lines(loaded(a)), model_lines(loaded(b))
    assert first["weights sha256"] == real(a) and second["weights sha256"] == real(b)
    assert first["weights sha256"] != second["weights sha256"]
    assert model_lines(loaded(a)) == first and len(calls) == 2  # hashed once per model


def test_relative_links_open_the_dashboard_from_the_file():
    """Issue 49: an exported report's links were relative ("./?head=5..."), dead in the file.
    Joined to the dashboard's address (its public_url, else the one the browser used), they
    are clickable; an absolute link stays as it is."""
    from analysis.report.export import absolute, to_markdown

    base = "http://127.0.0.1:8501/"
    assert absolute("./noop?noop_max=20", base) == "http://127.0.0.1:8501/noop?noop_max=20"
    assert absolute("./?head=5&layer=2", "http://host/dash") == "http://host/dash/?head=5&layer=2"
    assert absolute("https://demo.example/noop", base) == "https://demo.example/noop"
    assert absolute("./noop", None) == "./noop"
    html = to_html(_report(), versions={}, base=base)
    assert "<a href='http://127.0.0.1:8501/noop?noop_max=20'>" in html
    assert "<code>./noop" not in html
    md = to_markdown(_report(), {}, versions={}, base=base)
    assert "Link to this view: <http://127.0.0.1:8501/noop?noop_max=20>" in md
