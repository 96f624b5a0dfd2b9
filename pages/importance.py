"""The Head importance page, drawn by :func:`ui.importance.page.render` (pages only render)."""

from ui.importance.page import render

render()
