"""Predictions (docs/METHODS.md, "Predictions"): a classifier's answer to every example of a
labelled data set, errors first; its metrics over the whole set and every slice with bootstrap
95% intervals; a second classifier side by side; edits and generated counterfactuals; each row
opened into the other studies (LIT's data table, metrics and counterfactuals, joined to the
head-level studies of this dashboard).

Modules: :mod:`.data` (the rows: Head importance's readers, a Hugging Face dataset),
:mod:`.predict` (the forwards, a second model's rows), :mod:`.metrics` (per-row counts, slices'
metrics and paired changes with intervals), :mod:`.slices`, :mod:`.robustness` (counterfactuals
over the set), :mod:`.edit` (one row edited, two attributions), :mod:`.table` (the table's
filters and order, in pandas), :mod:`.result` (the result and its JSON), :mod:`.run` (the
study's one call), :mod:`.reading` (plain words), :mod:`.precomputed` (the example's result,
shipped).
"""
