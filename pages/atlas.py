"""Head atlas: one verdict per head from every study (docs/METHODS.md section 17)."""
from ui.atlas.page import render

render()
