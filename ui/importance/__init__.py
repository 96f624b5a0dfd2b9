"""The Head importance page's state, cached computations and blocks (docs/METHODS.md
section 12)."""
