"""The Representations page, drawn by :func:`ui.representations.page.render` (pages only render)."""

from ui.representations.page import render

render()
