"""The Head atlas page (analysis.atlas): the grid of heads, the evidence card, the verdict."""
