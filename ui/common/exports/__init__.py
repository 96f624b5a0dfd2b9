"""Everything a visitor takes away: the one download button (:mod:`.download`, its JavaScript in
``download/``), the charts' PNG/SVG/CSV and the JSON downloads (:mod:`.export`), the findings
report in the session (:mod:`.findings`) and its copy kept in the visitor's browser
(:mod:`.keep`), and their session keys (:mod:`.state`)."""
