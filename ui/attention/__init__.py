"""The Attention page: its state (state.py: every session key, URL parameter and cache key), its
component (component.py: payload schema, reducer, caches; JS as ES modules in frontend/, joined
by bundle.py) and its blocks (blocks.py: neuron view, reading, report)."""
