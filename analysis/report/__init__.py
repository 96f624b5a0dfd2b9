"""Findings report: pinned results with their numbers, links and provenance; export as one
offline HTML file or Markdown + PNG in a .zip; the JSON round trip (no streamlit here);
:mod:`.study` is its one interface (:data:`STUDY`: a saved report reopened)."""

from analysis.report.export import to_html, to_markdown, to_markdown_zip
from analysis.report.findings import (FORMAT, MAX_FINDINGS, MAX_JSON_BYTES, Finding, Report,
                                      report_from_json, safe_link)
from analysis.report.glossary import GLOSSARY, terms_in
from analysis.report.provenance import (data_source, model_source, package_versions,
                                        weights_hash)
from analysis.report.svg import clean_svg
from analysis.report.study import STUDY

__all__ = ["STUDY", "FORMAT", "GLOSSARY", "MAX_FINDINGS", "MAX_JSON_BYTES", "Finding", "Report",
           "clean_svg", "data_source", "model_source", "package_versions", "report_from_json",
           "safe_link", "terms_in", "to_html", "to_markdown", "to_markdown_zip", "weights_hash"]
