"""The No-op statistics page, drawn by :func:`ui.noop.page.render` (pages only render)."""

from ui.noop.page import render

render()
