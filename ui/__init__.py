"""The Streamlit interface. It mirrors :mod:`analysis`: ``ui.common`` holds the blocks every page
shares (sidebar, settings, job queue, model resources and pickers, corpus picker, charts, exports,
links, findings for the report, errors), and each study has one package (``ui.attention``,
``ui.noop``, ``ui.aspects``, ``ui.drift``, ``ui.syntax``, ...) with its page blocks and the one
module that owns its state. Pages (``pages/``) only wire these blocks together."""
