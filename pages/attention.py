"""The Attention page, drawn by :func:`ui.attention.page.render` (pages only render)."""

from ui.attention.page import render

render()
