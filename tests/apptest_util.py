"""Helpers shared by the pages' AppTests."""

from __future__ import annotations


def chart_frames(at) -> list:
    """The data frames behind the page's Altair charts (Arrow IPC streams in the protos)."""
    import pyarrow as pa

    out = []
    for chart in at.get("vega_lite_chart"):
        for ds in chart.proto.datasets:
            out.append(pa.ipc.open_stream(ds.data.data).read_all().to_pandas())
    return out
