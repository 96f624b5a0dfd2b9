"""Head importance (Kovaleva et al. 2019; Michel et al. 2019; docs/METHODS.md section 12):
switch heads and layers of a fine-tuned classifier off, two ways, and measure what its task
metric and loss lose on held-out labelled data, with paired bootstrap intervals; gradient
importance of gates on the heads' outputs and its agreement with the measured drops; pruning
curves; a plain reading.

Modules: :mod:`.evalset` (the classifier and its labelled examples, encoded once),
:mod:`.scoring` (metrics as per-unit counts, paired bootstrap), :mod:`.ablate` (batched
ablations), :mod:`.gradients` (Michel's gate gradients), :mod:`.pruning` (orders and curves),
:mod:`.run` (the study: page and CLI), :mod:`.one` (the same for one example: its
per-example view), :mod:`.study` (its inputs, plans, ``STUDY`` and ``ONE``: the study
interface), :mod:`.reading` (plain words), :mod:`.links` (the other studies' heads to
mark).
"""

from analysis.importance.run import ImportanceResult, importance_study
from analysis.importance.study import STUDY

__all__ = ["STUDY", "ImportanceResult", "importance_study"]
