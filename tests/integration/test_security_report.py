"""Issue 24, items 2 and 5: a tiny report whose chart claims 23,000 x 23,000 pixels renders as a
bounded PNG (memory measured in a subprocess); the SVG cleaner keeps only whitelisted values,
so CSS escapes, comments and image-set() cannot smuggle a URL."""

from __future__ import annotations

import io
import json
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from analysis.report.svg import clean_svg, raster_size, safe_value

ROOT = Path(__file__).resolve().parents[2]
SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}">{body}</svg>'


def report_json(svg: str) -> bytes:
    return json.dumps({"format": "attention-dashboard-report", "version": 1,
                       "findings": [{"title": "big", "svg": svg}]}).encode()


SMUGGLED = [r"\75 rl(http://127.0.0.1:9999/x.png)", r"\000075rl(http://x/)",
            "u/**/rl(http://x/)", "url(/**/http://x/)", "URL(http://x/)", "url( 'http://x/' )",
            'image-set("http://x/a.png" 1x)', "-webkit-image-set(url(#a) 1x)",
            "red;background:url(http://x/)", "expression(alert(1))", "var(--x)",
            "url(#a) url(http://x/)", "url(data:image/png;base64,AAAA)", "attr(href url)"]
KEPT = ["#4c78a8", "rgb(76, 120, 168)", "rgba(0,0,0,0.5)", "none", "steelblue", "url(#clip1)",
        "url('#grad-2')", "translate(0.5,0.5) rotate(-90)", "M0,0L10,10Z", "1e-3",
        "Helvetica Neue, Arial, sans-serif", "'Segoe UI'", "4,2"]


@pytest.mark.parametrize("value", SMUGGLED)
def test_smuggled_urls_are_dropped(value):
    assert not safe_value("fill", value)
    body = f'<rect width="5" height="5" fill="{value.replace(chr(34), "&quot;")}"/>'
    out = clean_svg(SVG.format(w=10, h=10, body=body))
    assert out == SVG.format(w=10, h=10, body='<rect width="5" height="5" />')


def test_plain_chart_values_are_kept():
    assert all(safe_value("fill", v) for v in KEPT)
    assert safe_value("aria-label", "x: 3; y: http://not-a-link/ (plain text)")
    assert not safe_value("id", "a b") and not safe_value("class", "x;y")


def test_the_root_size_must_be_plain_pixels():
    assert raster_size(clean_svg(SVG.format(w="300px", h=200, body=""))) == (300.0, 200.0)
    out = clean_svg('<svg xmlns="http://www.w3.org/2000/svg" width="100cm" height="5in" '
                    'viewBox="0 0 40 30"></svg>')
    assert raster_size(out) == (40.0, 30.0)
    assert raster_size(clean_svg(SVG.format(w="23000", h="23000", body=""))) == (23000, 23000)


MEASURE = r"""
import io, resource, struct, sys, zipfile
from pathlib import Path
import vl_convert
from analysis.report import report_from_json, to_markdown_zip
rep = report_from_json(Path(sys.argv[1]).read_bytes())
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
data = to_markdown_zip(rep, versions={})
png = zipfile.ZipFile(io.BytesIO(data)).read("images/finding-01.png")
w, h = struct.unpack(">II", png[16:24])
print(w, h, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024,
      resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
"""


def test_a_299_byte_report_renders_a_bounded_png(tmp_path):
    from analysis.report.raster import MAX_PIXELS

    body = '<rect width="23000" height="23000" fill="#3b6fd8"/><text x="9" y="9">hi</text>'
    data = report_json(SVG.format(w=23000, h=23000, body=body))
    assert len(data) < 300
    path = tmp_path / "report.json"
    path.write_bytes(data)
    out = subprocess.run([sys.executable, "-c", MEASURE, str(path)], capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    w, h, grew, child = out.stdout.split()
    assert int(w) * int(h) <= MAX_PIXELS and abs(int(w) - int(h)) <= 1
    assert int(w) >= 2000  # drawn smaller, not refused
    assert float(grew) < 100, f"the server's peak memory grew by {grew} MB"  # was 4,500 MB
    assert float(child) < 600, f"the drawing child's peak was {child} MB"


def test_a_small_chart_keeps_its_scale():
    from analysis.report.raster import svg_png

    png = svg_png(clean_svg(SVG.format(w=120, h=80, body='<rect width="9" height="9"/>')))
    assert struct.unpack(">II", png[16:24]) == (240, 160)  # scale 2 as before


def test_the_markdown_zip_of_a_normal_report_still_has_every_image():
    from analysis.report import Finding, Report, to_markdown_zip

    rep = Report(findings=[Finding("a", svg=SVG.format(w=50, h=40, body="")), Finding("b")])
    names = zipfile.ZipFile(io.BytesIO(to_markdown_zip(rep, versions={}))).namelist()
    assert names == ["images/finding-01.png", "report.md", "report.json"]


def test_a_slow_chart_is_cut_off_in_a_child_and_never_blocks_the_server():
    """200 half-transparent squares on a 2,828 px canvas took 213 s to draw in the server's
    interpreter, holding the GIL; now a child draws it and is stopped at the time limit while
    the server's other threads keep running."""
    import threading
    import time

    from analysis.report import Finding, Report, to_markdown_zip

    squares = "".join(f'<rect x="{i}" y="{i}" width="2000" height="2000" fill="#3b6fd8" '
                      f'opacity="0.1"/>' for i in range(200))
    slow = Finding("slow", svg=SVG.format(w=2828, h=2828, body=squares))
    quick = Finding("quick", svg=SVG.format(w=40, h=30, body=""))
    gaps, stop = [], threading.Event()

    def tick():
        last = time.perf_counter()
        while not stop.wait(0.01):
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    t = threading.Thread(target=tick)
    t.start()
    try:
        data = to_markdown_zip(Report(findings=[quick, slow]), versions={}, timeout_s=4)
    finally:
        stop.set()
        t.join()
    z = zipfile.ZipFile(io.BytesIO(data))
    assert z.namelist() == ["images/finding-01.png", "report.md", "report.json"]
    assert "could not be drawn within the server's limits" in z.read("report.md").decode()
    assert max(gaps) < 1.0  # the GIL stayed free while the child drew
