"""ui/common/chart_cache.py: the spec a cached chart sends is made with Altair's public
``to_dict`` and equals what ``st.altair_chart`` sends (Streamlit's own conversion, private, is
used here only as the reference), data included, above Altair's 5,000-row default limit too."""

from __future__ import annotations

import io
import json

import altair as alt
import pandas as pd
import pyarrow as pa

from ui.common.chart_cache import _data_names, vega_lite_spec


def _streamlit_spec(chart) -> tuple[dict, dict]:
    from streamlit.elements.vega_charts import _convert_altair_to_vega_lite_spec

    spec = _convert_altair_to_vega_lite_spec(chart)
    data = {k: pa.ipc.open_stream(io.BytesIO(v)).read_all().to_pandas()
            for k, v in spec.pop("datasets").items()}
    return spec, data


def _same(chart) -> None:
    ours = vega_lite_spec(chart)
    theirs, their_data = _streamlit_spec(chart)
    our_data = ours.pop("datasets")
    assert len(our_data) == len(their_data) >= 1
    rename = dict(zip(sorted(our_data), sorted(their_data)))
    text = json.dumps(ours, sort_keys=True)
    for a, b in rename.items():
        text = text.replace(a, b)
    assert json.loads(text) == theirs
    for a, b in rename.items():
        left = our_data[a].reset_index(drop=True)
        right = their_data[b][list(left.columns)].reset_index(drop=True)
        assert left.astype(str).equals(right.astype(str))


def test_a_large_chart_has_streamlits_spec_and_every_row():
    df = pd.DataFrame({"x": range(6000), "y": [i % 7 for i in range(6000)],
                       "token": ["<b>a</b>"] * 6000})
    chart = alt.Chart(df, title="T").mark_rect().encode(
        x="x:O", y="y:O", color="y:Q", tooltip=["token"]).properties(width=100)
    _same(chart)
    assert len(vega_lite_spec(chart)["datasets"]) == 1
    assert len(next(iter(vega_lite_spec(chart)["datasets"].values()))) == 6000


def test_layered_and_faceted_charts():
    df = pd.DataFrame({"layer": [1, 1, 2, 2], "value": [0.1, 0.5, 0.2, 0.9],
                       "model": ["a", "b", "a", "b"]})
    base = alt.Chart(df).encode(x="layer:O", y="value:Q", color="model:N")
    _same(base.mark_line() + base.mark_point())
    _same(base.mark_bar().properties(width=80).facet(column="model:N"))


def test_every_named_dataset_is_found():
    spec = {"data": {"name": "a"}, "layer": [{"data": {"name": "b"}}, {"mark": "point"}]}
    assert _data_names(spec) == {"a", "b"}
