"""The Fine-tuning drift page, drawn by :func:`ui.drift.page.render` (pages only render)."""

from ui.drift.page import render

render()
