"""The Report page's package: its state (session keys, one place) and its blocks."""
