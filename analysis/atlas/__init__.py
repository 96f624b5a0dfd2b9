"""The head atlas (docs/METHODS.md section 18): one verdict per attention head, from every
study, in one place. For a model (default: the example checkpoint, with the embedded model as
"before"), each study's own library call on the data it uses by default gives its numbers per
head; the atlas joins them into one set of facts per head, a role from stated rules with
adjustable thresholds, whether the task uses the head, a verdict on the model as a whole, and
the heads whose role and use disagree, named in plain words.

Modules: :mod:`.facts` (one head's facts from each study's numbers, the role and use rules and
the words every page says about a head: it imports no study, so the other studies' readings
take their statements about heads from it), :mod:`.steps` (each study's call, on its default
data, as one step of work whose result is kept on disk), :mod:`.run` (``Inputs``, ``Result``,
the plan, the assembly of the steps' evidence), :mod:`.reading` (the model verdict and the
disagreements in words), :mod:`.precomputed` (the example's atlas shipped with the project).

This file imports nothing: a study's reading imports :mod:`.facts` without loading the atlas's
other modules (which import the studies).
"""
