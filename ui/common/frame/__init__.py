"""The page frame every page is drawn in: the sidebar (model and text, bound to the URL) and
what a page reads from it (:mod:`.sidebar`), the model and corpus pickers (:mod:`.models`,
:mod:`.corpus`), the cached models and the upload caps (:mod:`.resources`), deep links and the
Copy link button (:mod:`.links`, :mod:`.url_select`), the "What am I looking at?" blocks
(:mod:`.explain`), the frame's session keys (:mod:`.state`) and the one workaround for
Streamlit's legacy pages-folder mode (:mod:`.legacy_pages`)."""
