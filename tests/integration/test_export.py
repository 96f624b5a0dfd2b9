"""Exports at every size: a 512 x 512 map of the default model gives a valid PNG, an SVG with
its marks and a complete CSV; charts over Altair's 5,000-row limit export in full; a map too
large for one mark per cell exports in token blocks and says so; a failed render falls back or
says why, never a silent no-op; the buttons keep their text labels."""

from __future__ import annotations

import io
import numpy as np
import pandas as pd
import pytest
from defusedxml import ElementTree

from ui.common.exports import export
from ui.common.charts import attention_heatmap, map_frame
from ui.common.exports.export import ExportError, block_map, export_plan, render_export
from download_util import downloads

PNG = b"\x89PNG\r\n\x1a\n"
SVG_NS = "{http://www.w3.org/2000/svg}"


def _rect_marks(svg: str) -> int:
    """Cells drawn by the heatmap's rect mark (vl-convert writes one path per cell)."""
    root = ElementTree.fromstring(svg)
    return sum(1 for el in root.iter(f"{SVG_NS}path")
               if el.get("aria-roledescription") == "rect mark")


@pytest.fixture(scope="module")
def long_map(default_model):
    from analysis.attention import attention_for

    text = " ".join(["the waiter brought the pasta and the wine list"] * 80)
    result = attention_for(default_model, text, "what do you think of the service ?")
    assert result.encoding.n_tokens == 512
    return list(result.encoding.tokens), result.attentions[2, 5]


def test_block_map_means_each_block():
    m = np.arange(36, dtype=float).reshape(6, 6)
    names, blocks, k = block_map(list("abcdef"), m, cells=3)
    assert k == 2 and names == ["1-2: a", "3-4: c", "5-6: e"]
    assert blocks[0, 0] == np.mean([0, 1, 6, 7]) and blocks[2, 1] == np.mean([26, 27, 32, 33])
    names, blocks, k = block_map(list("abcde"), m[:5, :5], cells=2)  # a ragged last block
    assert k == 3 and names == ["1-3: a", "4-5: d"]
    assert blocks[1, 1] == np.mean([21, 22, 27, 28])


def test_512_token_map_exports_png_svg_csv(long_map):
    labels, matrix = long_map
    chart = attention_heatmap(map_frame(labels, matrix), labels, "Layer 3, head 6")
    smaller, note = export_plan(chart)
    assert smaller is not None
    assert note.startswith("This map has 262,144 cells") and "4 x 4" in note
    png = render_export("png", chart, smaller)
    assert png[:8] == PNG
    from PIL import Image

    img = Image.open(io.BytesIO(png))
    assert min(img.size) > 1000  # drawn at scale 2
    svg = render_export("svg", chart, smaller)
    assert _rect_marks(svg) == 128 * 128
    assert "(mean of 4 x 4 token blocks)" in svg
    assert ">1-4: [CLS]</text>" in svg  # block labels: token range and first token
    names, blocks, _ = block_map(labels, matrix)
    assert len(names) == 128 and blocks[0, 0] == pytest.approx(matrix[:4, :4].mean())
    csv = pd.read_csv(io.StringIO(map_frame(labels, matrix).to_csv(index=False)))
    assert len(csv) == 512 * 512
    grid = csv.sort_values(["from_pos", "to_pos"])["weight"].to_numpy().reshape(512, 512)
    np.testing.assert_allclose(grid, matrix, atol=1e-7)
    np.testing.assert_allclose(grid.sum(1), 1.0, atol=1e-4)


def test_a_chart_over_5000_rows_exports_every_cell():
    rng = np.random.default_rng(0)
    m = rng.dirichlet(np.ones(80), 80)  # 6,400 cells: over Altair's limit, under ours
    labels = [f"w{i}" for i in range(80)]
    chart = attention_heatmap(map_frame(labels, m), labels, "t")
    assert export_plan(chart) == (None, None)
    assert render_export("png", chart)[:8] == PNG
    assert _rect_marks(render_export("svg", chart)) == 6400


def test_a_failed_render_falls_back_or_says_why(monkeypatch):
    m = np.eye(3)
    chart = attention_heatmap(map_frame(list("abc"), m), list("abc"), "big")
    small = attention_heatmap(map_frame(list("ab"), m[:2, :2]), list("ab"), "small")
    real = export.chart_svg

    def flaky(c):
        if c is chart:
            raise RuntimeError("renderer crashed")
        return real(c)

    monkeypatch.setattr(export, "chart_svg", flaky)
    svg = render_export("svg", chart, lambda: small)
    assert _rect_marks(svg) == 4
    with pytest.raises(ExportError, match="The SVG could not be drawn .*the CSV holds the data"):
        render_export("svg", chart)


SCRIPT = """
import numpy as np
from ui.common.charts import attention_heatmap, map_frame
from ui.common.exports.export import chart_downloads
with st.columns(2)[0]:
    n = {n}
    labels = [f"t{{i}}" for i in range(n)]
    m = np.full((n, n), 1.0 / n)
    chart = attention_heatmap(map_frame(labels, m), labels, "map")
    chart_downloads(chart, "map", "dl", map_frame(labels, m))
"""


@pytest.mark.parametrize("n,noted", [(20, False), (300, True)])
def test_buttons_keep_their_labels_and_large_maps_say_what_they_export(n, noted):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string("import streamlit as st\n" + SCRIPT.format(n=n)).run(timeout=60)
    assert not at.exception
    buttons = [b for b in downloads(at)]
    assert [b.label for b in buttons] == ["PNG", "SVG", "CSV"]
    assert all(b.data["answer"] is None for b in buttons)  # made only when clicked
    captions = [c.value for c in at.caption]
    assert any("PNG and SVG show the mean of each" in c for c in captions) == noted


MAP_SCRIPT = """
import numpy as np
from ui.common.exports.export import map_downloads
n = {n}
m = np.full((n, n), 1.0 / n)
map_downloads([f"t{{i}}" for i in range(n)], m, "map", "map", "dl")
"""


@pytest.mark.parametrize("n,noted", [(30, False), (512, True)])
def test_map_downloads_build_nothing_until_clicked(n, noted, monkeypatch):
    """The page's map downloads: no chart or table is built on a rerun (only on a click)."""
    from streamlit.testing.v1 import AppTest

    import ui.common.exports.export as ex

    built = []
    monkeypatch.setattr(ex, "map_frame", lambda *a, **k: built.append(1))
    at = AppTest.from_string("import streamlit as st\n" + MAP_SCRIPT.format(n=n)).run(timeout=60)
    assert not at.exception and not built
    assert [b.label for b in downloads(at)] == ["PNG", "SVG", "CSV"]
    captions = [c.value for c in at.caption]
    assert any("262,144 cells" in c for c in captions) == noted
