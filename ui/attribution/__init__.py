"""The Attribution page's blocks (pages/attribution.py): state, computations, views."""
