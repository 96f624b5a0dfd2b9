"""Blocks every page shares, one concept to a subpackage: the page frame (:mod:`ui.common.frame`:
sidebar, pickers, model resources, links, explanations), the exports (:mod:`ui.common.exports`:
downloads, chart exports, the findings report), the job queue's display and the attention-view
component. Beside them, modules every one of those uses: the server settings (:mod:`.settings`),
plain text and error boxes (:mod:`.errors`), HTML escaping (:mod:`.html`) and the shared Altair
charts (:mod:`.charts`)."""
