"""The one workaround for a private Streamlit switch (issue 18), kept here alone.

The app keeps its pages in a top-level ``pages/`` folder beside ``app.py``. Streamlit 1.67 then
starts every server in its legacy pages-folder mode (``PagesManager`` sets
``uses_pages_directory`` when ``pages/`` exists beside the main script), and in that mode a
first request for ``/noop`` runs ``pages/noop.py`` alone, without ``app.py``: no sidebar, no
``st.navigation``. The supported switch, ``st.navigation`` ("as soon as any session executes
st.navigation, your app will ignore the pages/ directory"), runs only in ``app.py``, too late for
that first request; no config option turns the mode off (``client.showSidebarNavigation`` only
hides its menu). tests/test_legacy_pages.py checks each of these facts on the installed
Streamlit: when one stops holding, this module can go.
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager  # private: see the module doc


def leave_legacy_navigation() -> None:
    """In legacy pages-folder mode, switch it off and start the run again through ``app.py``
    (once per server process: the switch is process-wide)."""
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()
