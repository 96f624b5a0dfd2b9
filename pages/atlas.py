"""The Head atlas page, drawn by :func:`ui.atlas.page.render` (pages only render)."""

from ui.atlas.page import render

render()
