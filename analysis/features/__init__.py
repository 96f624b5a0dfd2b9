"""Features (docs/METHODS.md section 19): a sparse dictionary of what one layer of an encoder
represents, read feature by feature, and what fine-tuning added.

A top-k sparse autoencoder (Gao et al. 2024) is trained on the residual stream after a layer
(hidden_states; 0 = the embeddings) over a corpus; its quality is always measured (held-out
FVE, normalised MSE, L0, dead features, splice fidelity); every feature gets its frequency,
top tokens and contexts, activation histogram, the annotations it aligns with (UPOS,
dependency relation, aspect role, label) and a label, the most frequent their class effects;
a crosscoder (Lindsey et al. 2024, BatchTopK as Minder et al. 2025 recommend) on the base and
the fine-tuned model sorts features into base-only, shared and fine-tuned-only, with Minder et
al.'s Latent Scaling checks. No maintained library fits (SAELens and dictionary-learning train
from decoder language models' activation stores and pull wandb, nnsight or TransformerLens;
interpreto requires CUDA builds): this is a small documented implementation.

Modules: :mod:`.sae` (the dictionary, its exact encoding and its files), :mod:`.train` (the
trainer), :mod:`.corpus` (inputs, labels, held-out split), :mod:`.activations` (the one
forward path's hidden states), :mod:`.quality`, :mod:`.browser` (per-feature numbers),
:mod:`.effects` (class effects), :mod:`.crosscoder` and :mod:`.diff` (before and after),
:mod:`.data` (models and corpora by name, the example's defaults), :mod:`.study` (Inputs,
Result, plan, run), :mod:`.precomputed` (the example's shipped result), :mod:`.reading`.
"""

from analysis.features.study import STUDY, Inputs, Models, Result, run

__all__ = ["STUDY", "Inputs", "Models", "Result", "run"]
