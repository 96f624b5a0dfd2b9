"""The Attention page: its component (head view, model view, canvas heatmap; JS in frontend/) and
its blocks (neuron view, reading, report)."""
