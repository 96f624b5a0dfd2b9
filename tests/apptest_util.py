"""Helpers shared by the pages' AppTests."""

from __future__ import annotations


def chart_frames(at) -> list:
    """The data frames behind the page's Altair charts (Arrow IPC streams in the protos)."""
    import pyarrow as pa

    out = []
    for chart in wide_charts(at):
        for ds in chart.proto.datasets:
            out.append(pa.ipc.open_stream(ds.data.data).read_all().to_pandas())
    return out


def wide_charts(at) -> list:
    """The page's charts in order, without the phone's copy of a side-by-side comparison
    (``ui.common.charts.side_by_side``: the same data, stacked, in a ``fitnarrow-`` block)."""
    from ui.common.frame.state import fit_keys

    phone = fit_keys("")[1]
    out = []

    def walk(node, hidden: bool) -> None:
        hidden = hidden or str(getattr(node, "key", None) or "").startswith(phone)
        if getattr(node, "type", None) == "vega_lite_chart" and not hidden:
            out.append(node)
        for child in getattr(node, "children", {}).values():
            walk(child, hidden)

    walk(at._tree, False)
    return out
