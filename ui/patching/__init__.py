"""The Causal patching page's Streamlit glue: state keys, cached work, charts."""
