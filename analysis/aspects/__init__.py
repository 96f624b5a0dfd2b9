"""The Aspect heads study (Sun et al. 2019 data, Clark et al. 2019 word-level maps): which heads
attend from the aspect to its terms and opinion words, against baselines, and whether masking
them costs the task (docs/METHODS.md section 8). The ABSA data, tasks, fine-tuning and
checkpoints it uses are :mod:`analysis.absa`.

- :mod:`.gold`: the gold sets of head discovery (what each kind of head should attend to);
- :mod:`.heads`, :mod:`.baselines`, :mod:`.causal`: aspect-head discovery, its baselines and
  the masking check;
- :mod:`.reading`: the page's plain reading;
- :mod:`.study`: its inputs, result, plan and ``STUDY`` (the study interface; the CLI's
  ``aspects heads``).
"""

from analysis.aspects.study import STUDY

__all__ = ["STUDY"]
