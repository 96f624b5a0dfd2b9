"""What the server governs, apart from what pages draw: its settings (``DASHBOARD_MODE``,
``DASHBOARD_SETTINGS``, ``DASHBOARD_RAY_ADDRESS``: :mod:`.settings`), who a visitor is
(:mod:`.visitors`), the upload caps and the patch of Streamlit's upload manager that keeps them
(:mod:`.uploads`), each visitor's memory budget for the models they hold (:mod:`.memory`), the
caches bounded by bytes, server-wide and per visitor (:mod:`.caches`), and
the server's housekeeping: the long-lived heap frozen out of the collection after every run,
leftover temporary folders removed at start (:mod:`.housekeeping`). It imports nothing of
``ui.common``; pages and the shared blocks call it."""
