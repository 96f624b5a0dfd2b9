"""The Attribution page, drawn by :func:`ui.attribution.page.render` (pages only render)."""

from ui.attribution.page import render

render()
