"""Entry point: page config, the shared sidebar (model + input), navigation over pages/."""

import streamlit as st

st.set_page_config(page_title="Attention dashboard", page_icon=":material/hub:", layout="wide")

from ui.sidebar import render  # noqa: E402  (after set_page_config)

st.markdown(
    "<style>.model-card{font-size:0.85rem;line-height:1.5;color:#444}"
    ".tok{display:inline-block;margin:2px 3px;padding:1px 6px;border-radius:4px;"
    "font-family:ui-monospace,monospace;font-size:0.85rem}"
    ".tok.a{background:#e7effd}.tok.b{background:#fdf0e3}.tok.sp{background:#555;color:#fff}"
    "</style>",
    unsafe_allow_html=True,
)

PAGES = [
    st.Page("pages/attention.py", title="Attention", icon=":material/visibility:",
            url_path="attention", default=True),
]

nav = st.navigation(PAGES)
render()
nav.run()
