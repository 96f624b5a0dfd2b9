"""Blocks every page shares: sidebar, settings, job queue, model resources and pickers, corpus
picker, charts and their cache, exports, links, findings for the report, errors and escaping."""
