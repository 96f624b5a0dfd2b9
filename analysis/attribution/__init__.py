"""Study: attribution. What the model used for a prediction, beyond raw attention weights,
and which explanation to trust (docs/METHODS.md section 11).

- :mod:`.mixing`: per-layer context mixing (raw attention, rollout, attention norms, norms with
  residual and layer norm, ALTI) from one forward's internals; :mod:`.l1`: ALTI's L1
  distances in one compiled loop;
- :mod:`.zeroing`: value zeroing, all n zeroings of a layer in one batched pass;
- :mod:`.gradients`: gradient x input and integrated gradients through Captum;
- :mod:`.run`: one input, every method (:func:`attribute`), the CLI's JSON, agreement;
- :mod:`.faithfulness`: comprehensiveness, sufficiency, leave-one-out, random baseline;
- :mod:`.reading`: the plain readings;
- :mod:`.study`: the study's one interface (:data:`STUDY` one input, :data:`FAITHFULNESS` a
  corpus).
"""

from analysis.attribution.faithfulness import KS, REMOVALS, Faithfulness, check_ks, faithfulness
from analysis.attribution.reading import faithfulness_reading, input_reading
from analysis.attribution.run import (GRADIENT, METHODS, MIXING, NAMES, Attribution,
                                      agreement, attribute, check_methods, load_for_attribution)
from analysis.attribution.study import FAITHFULNESS, STUDY

__all__ = ["FAITHFULNESS", "STUDY", "KS", "REMOVALS", "Faithfulness", "check_ks",
           "faithfulness", "faithfulness_reading", "input_reading", "GRADIENT", "METHODS",
           "MIXING", "NAMES", "Attribution", "agreement", "attribute", "check_methods",
           "load_for_attribution"]
