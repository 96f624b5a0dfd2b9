"""The Syntax page, drawn by :func:`ui.syntax.page.render` (pages only render)."""

from ui.syntax.page import render

render()
