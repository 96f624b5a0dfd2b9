"""The Aspect heads page (Sun et al. 2019): checkpoint steps (models) and page blocks."""
