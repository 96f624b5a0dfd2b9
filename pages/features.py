"""Features: sparse dictionaries of a layer and what fine-tuning added (ui.features.page)."""

from ui.features.page import render

render()
