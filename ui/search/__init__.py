"""The Search page (exBERT's corpus search, Hoover et al. 2020): state, blocks."""
