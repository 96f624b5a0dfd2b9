"""The Report page, drawn by :func:`ui.report.page.render` (pages only render)."""

from ui.report.page import render

render()
