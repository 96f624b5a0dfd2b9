"""The attention component: the interactive head view, model view and canvas heatmap every page
that draws attention shares.

- :mod:`.contract` (no Streamlit): the constants Python and JavaScript share and the payload
  check, both reading the one payload contract, :mod:`analysis.attention.payload_spec`;
- :mod:`.views`: the Streamlit components (``attention_views``, ``head_view``, ``model_view``),
  which load the committed bundle ``frontend/dist/``;
- :mod:`.build`: regenerates ``frontend/constants.js`` and ``frontend/payload_spec.js`` and
  bundles the ES modules of ``frontend/`` with esbuild (Node is a build and test tool only).
"""
