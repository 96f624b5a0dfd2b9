"""analysis/report/svg.py: a chart's SVG is rebuilt with only what a chart needs; scripts,
handlers, links and outside references are dropped, text stays text."""

from __future__ import annotations

import pytest

from analysis.core.errors import DataError
from analysis.report.svg import clean_svg

SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" onload="alert(1)">'
       '<script>alert(2)</script><a href="https://x.org"><rect width="5" height="5"/></a>'
       '<g clip-path="url(#clip1)"><rect fill="url(https://x.org/p.svg#a)" width="1"/></g>'
       '<text x="1">&lt;b&gt;soup</text><foreignObject><div>hi</div></foreignObject></svg>')


def test_only_chart_elements_and_safe_attributes_remain():
    out = clean_svg(SVG)
    assert "script" not in out and "alert" not in out and "onload" not in out
    assert "href" not in out and "foreignObject" not in out and "x.org" not in out
    assert 'clip-path="url(#clip1)"' in out  # a fragment of the same SVG stays
    assert "&lt;b&gt;soup" in out  # text content escaped on output
    assert out.count("<rect") == 1 and 'width="10"' in out


def test_not_an_svg_is_refused():
    with pytest.raises(DataError):
        clean_svg("<html><body/></html>")
    with pytest.raises(DataError):
        clean_svg("<svg")
