"""The Features page, drawn by :func:`ui.features.page.render` (pages only render)."""

from ui.features.page import render

render()
