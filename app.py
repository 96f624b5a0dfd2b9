"""Entry point: page config, the shared sidebar (model + input), navigation over pages/."""

from pathlib import Path

import streamlit as st

from analysis.core.execution.threads import passive_waits
from ui.attention import state as attention_state
from ui.common.charts import FIT_CSS
from ui.common.errors import plain
from ui.common.example import start_build
from ui.common.exports.keep import keep_report
from ui.common.exports.state import KEEP_RUN
from ui.server.housekeeping import freeze_long_lived
from ui.server.settings import SettingsError, settings
from ui.common.frame.sidebar import leave_legacy_navigation, render

# Before any page loads torch: its OpenMP threads then sleep, not spin, while they wait for each
# other, which on a busy machine cost 6x the CPU (analysis/core/execution/threads.py).
passive_waits()

# A pages/ folder makes Streamlit's first run use its legacy auto-discovered menu; leave it.
leave_legacy_navigation()

# The tab's icon is the project's own SVG, sent inline: a ":material/...:" page icon makes the
# browser fetch it from fonts.gstatic.com, a request that fails offline (issue 22).
FAVICON = Path(__file__).resolve().parent / "ui" / "common" / "favicon.svg"
st.set_page_config(page_title="Attention dashboard", page_icon=str(FAVICON), layout="wide")

st.html(
    "<style>.model-card{font-size:0.85rem;line-height:1.5;color:#444}"
    ".tok{display:inline-block;margin:2px 3px;padding:1px 6px;border-radius:4px;"
    "font-family:ui-monospace,monospace;font-size:0.85rem}"
    ".tok.a{background:#e7effd}.tok.b{background:#fdf0e3}.tok.sp{background:#555;color:#fff}"
    # a text box's "Press Ctrl+Enter / 123/20000" line goes below the box, not over its text
    "[data-testid='stTextArea'] [data-testid='InputInstructions']{position:static;"
    "text-align:right;padding-top:2px}"
    + FIT_CSS +  # side-by-side charts stack on a phone (ui.common.charts.side_by_side)
    "</style>"
)

try:  # DASHBOARD_MODE / DASHBOARD_SETTINGS (ui/server/settings.py): a bad value stops here, plainly
    settings()
except SettingsError as exc:
    st.error(plain(str(exc)), icon=":material/error:")
    st.stop()

# The example checkpoint (ui/common/example.py) starts building on the server's first request,
# whichever page it is for, not when a page that needs it is first opened (issue 49): one build
# per server, in the background lane, and none while another process builds it.
start_build()

# Each url_path equals its file's stem: a server's first request is looked up by file name
# (Streamlit's legacy pages-folder mode, left at once by ui.common.frame.sidebar), so a shared
# deep link to any page works even as the very first visit.
DEFAULT_PAGE = "atlas"  # the default page's file stem (its own name in a URL: MOVED)
PAGES = [
    # served at "/"; its url_path only names it inside Streamlit (a page's identity is the hash
    # of its url_path), so that the hidden page under its own name (MOVED) is another page
    st.Page(f"pages/{DEFAULT_PAGE}.py", title="Head atlas", icon=":material/grid_view:",
            url_path=f"{DEFAULT_PAGE}-default", default=True),
    st.Page("pages/attention.py", title="Attention", icon=":material/visibility:",
            url_path="attention"),
    st.Page("pages/noop.py", title="No-op statistics", icon=":material/bar_chart:",
            url_path="noop"),
    st.Page("pages/aspects.py", title="Aspect heads", icon=":material/target:",
            url_path="aspects"),
    st.Page("pages/drift.py", title="Fine-tuning drift", icon=":material/compare_arrows:",
            url_path="drift"),
    st.Page("pages/syntax.py", title="Syntax", icon=":material/account_tree:", url_path="syntax"),
    st.Page("pages/attribution.py", title="Attribution", icon=":material/highlight:",
            url_path="attribution"),
    st.Page("pages/representations.py", title="Representations", icon=":material/scatter_plot:",
            url_path="representations"),
    st.Page("pages/importance.py", title="Head importance", icon=":material/content_cut:",
            url_path="importance"),
    st.Page("pages/patching.py", title="Causal patching", icon=":material/swap_horiz:",
            url_path="patching"),
    st.Page("pages/search.py", title="Search", icon=":material/search:", url_path="search"),
    st.Page("pages/predictions.py", title="Predictions", icon=":material/table_view:",
            url_path="predictions"),
    st.Page("pages/features.py", title="Features", icon=":material/grain:", url_path="features"),
    st.Page("pages/report.py", title="Report", icon=":material/summarize:", url_path="report"),
]



def _moved(target: str):
    """A page under an earlier URL (links shared before the pages took their study's name):
    open the page's new URL with the same query parameters."""
    def page() -> None:
        st.switch_page(target, query_params=st.query_params.to_dict())
    return page


# the pages that read the sidebar text
TEXT_PAGES = {"attention", "attribution", "representations", "report", "search",
              "features"}
MOVED = [st.Page(_moved("pages/noop.py"), title="No-op statistics (old link)",
                 url_path="noop_stats", visibility="hidden"),
         st.Page(_moved("pages/aspects.py"), title="Aspect heads (old link)",
                 url_path="aspect_heads", visibility="hidden")]
# The default page is served at "/" (Streamlit gives it the empty path whatever its url_path),
# so its own name ("/attention" while the Attention page was the default) said "Page not
# found... Running the app's main page." (issue 49): a hidden page under that name opens it,
# query parameters kept (the first request of a fresh server is looked up by file name, as for
# every page).
MOVED.append(st.Page(_moved(f"pages/{DEFAULT_PAGE}.py"), title="Default page (by name)",
                     url_path=DEFAULT_PAGE, visibility="hidden"))

# every page listed in the sidebar (Streamlit folds a list of more than ten under "View more",
# which hid the Report and Search pages)
nav = st.navigation(PAGES + MOVED, expanded=True)
# A link shared while the Attention page was the first page ("/?a=...&view=Heatmap&layer=2")
# carries the Attention page's own parameters: it opens that page, not the Head atlas.
ATTENTION_LINK = {attention_state.VIEW, attention_state.LAYER, attention_state.HEAD,
                  attention_state.LEVEL, attention_state.NO_SPECIAL, attention_state.QUERY,
                  attention_state.HEADS, attention_state.PIN, attention_state.SEG}
if nav.url_path in ("", f"{DEFAULT_PAGE}-default") and ATTENTION_LINK & set(st.query_params):
    st.switch_page("pages/attention.py", query_params=st.query_params.to_dict())
try:
    render(text_box=nav.url_path in TEXT_PAGES)  # the input box only where a page reads it
    # the findings kept in this browser: back after a reload (ui.common.exports.keep)
    with st.sidebar:
        keep_report(KEEP_RUN)
    nav.run()
finally:  # the long-lived heap out of the full collection Streamlit runs after every rerun
    freeze_long_lived()
