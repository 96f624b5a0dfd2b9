"""The Streamlit interface. It mirrors :mod:`analysis`: ``ui.common`` holds the blocks every page
shares (:mod:`ui.common.frame`: the sidebar, pickers, model resources and links;
:mod:`ui.common.exports`: downloads and the findings report; the job queue's display; the
attention-view component; errors and charts), ``ui.server`` what the server governs (settings,
visitors, upload caps, memory budgets, housekeeping), and each study has one package
(``ui.atlas``, ``ui.attention``, ``ui.noop``, ``ui.aspects``, ``ui.drift``, ``ui.syntax``,
...) with its page blocks and the one module that owns its state. Pages (``pages/``) only call
their study's ``page.render()``."""
