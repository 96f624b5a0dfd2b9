"""The Causal patching page, drawn by :func:`ui.patching.page.render` (pages only render)."""

from ui.patching.page import render

render()
