"""The Search page, drawn by :func:`ui.search.page.render` (pages only render)."""

from ui.search.page import render

render()
