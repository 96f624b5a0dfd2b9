"""The Predictions page's glue (analysis.predictions): state.py names every key, compute.py
holds the cached work, blocks.py the table, charts and links, page.py renders the page."""
