"""The demo server measured from outside: many Chromium visitors under a fine-tune (``load``
and its ``load_*`` parts), hostile visitors (``hostile``), server CPU per action against a bare
page (``cpu``, ``bare_app``), the caps' cost model (``caps``), heavy work beside other load
(``shared``) and a page rerun's profile (``profile_rerun``)."""
