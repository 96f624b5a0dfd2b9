"""The Attention page: its state (state.py: every session key, URL parameter and cache key), its
side of the attention component (component.py: what it asks, the reducer of what it reports,
caches; the component itself is ui.common.attention) and its blocks (blocks.py: neuron view,
reading, report)."""
