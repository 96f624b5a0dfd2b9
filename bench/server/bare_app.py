"""A bare Streamlit page: the floor that bench/server/cpu.py compares the dashboard with.

"A bare Streamlit page's rerun" means what Streamlit itself costs the server when a visitor acts
on a page that does nothing of its own: the script reruns from the top, sends a title, a text
box, a button and a few lines of text, and Streamlit diffs and ships them over the websocket.
No project code, no model, no chart, no cache: whatever the dashboard spends above this per
action is the dashboard's own work.

With BARE_FREEZE=1 the page also freezes its heap out of the full garbage collection Streamlit
runs after every rerun, once, as the dashboard does (ui.server.housekeeping.freeze_long_lived):
the floor with Streamlit's own ``gc.collect(2)`` over its ~50,000 objects taken out.

    python -m streamlit run bench/server/bare_app.py
"""

import gc
import os

import streamlit as st

st.title("Bare page")
text = st.text_input("Text", value="The pasta was superb.")
if "clicks" not in st.session_state:
    st.session_state.clicks = 0
if st.button("Click"):
    st.session_state.clicks += 1
st.write(f"Clicked {st.session_state.clicks} times.")
st.write(f"You typed: {text}")
st.caption("Three lines of text, as a page's explanation would have.")
st.markdown("Nothing else runs here: no model, no chart, no cache.")

if os.environ.get("BARE_FREEZE") == "1" and not gc.get_freeze_count():
    gc.collect()
    gc.freeze()
