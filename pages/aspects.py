"""The Aspect heads page, drawn by :func:`ui.aspects.page.render` (pages only render)."""

from ui.aspects.page import render

render()
