"""Representations: token vectors layer by layer (van Aken et al. 2019), before and after
fine-tuning, with per-layer probes and Ethayarajh's (2019) anisotropy and self-similarity
(docs/METHODS.md section 13).

Modules: :mod:`.states` (hidden states of every layer: one input's tokens, a treebank's or an
ABSA corpus's words with their UPOS / roles), :mod:`.projection` (per-layer PCA, Procrustes
alignment, t-SNE, UMAP; two models with one fit), :mod:`.probes` (cross-validated logistic
regression per layer, majority baseline; :mod:`.logistic` fits a layer's folds at once),
:mod:`.geometry` (anisotropy, self-similarity),
:mod:`.single` (one input), :mod:`.inputs` (one input from labelled data: ABSA roles, UPOS),
:mod:`.labelled` (a corpus with sentence labels), :mod:`.corpus` (a corpus), :mod:`.job` (the
corpus part as a map/merge job), :mod:`.run` (the job built after the checks, run in the
process), :mod:`.reading` (the plain reading), :mod:`.study` (the study's one interface:
:data:`STUDY` one input, :data:`CORPUS` a corpus).
"""

from analysis.representations.corpus import (CorpusResult, ModelSide, Scatter, check_probes,
                                             corpus_kind)
from analysis.representations.inputs import LabelledInput, absa_input, treebank_input
from analysis.representations.job import RepresentationsJob
from analysis.representations.labelled import labelled_words
from analysis.representations.geometry import anisotropy, layer_geometry, self_similarity
from analysis.representations.probes import ProbeCurve, probe_layers
from analysis.representations.projection import (METHODS, align_layers, pca_scores,
                                                 procrustes_rotation, project_layers)
from analysis.representations.reading import corpus_reading, input_reading
from analysis.representations.run import corpus_job, corpus_representations
from analysis.representations.single import InputResult, input_representations, linear_cka
from analysis.representations.study import CORPUS, STUDY
from analysis.representations.states import (ROLES, InputStates, WordCorpus, absa_words,
                                             check_same_shape, input_states, treebank_words)

__all__ = ["CORPUS", "STUDY", "CorpusResult", "InputResult", "InputStates", "LabelledInput",
           "METHODS",
           "ModelSide", "ProbeCurve", "ROLES", "RepresentationsJob", "Scatter", "WordCorpus",
           "absa_input", "absa_words", "align_layers", "anisotropy", "check_probes",
           "check_same_shape", "corpus_job", "corpus_kind", "corpus_reading",
           "corpus_representations", "input_reading", "input_representations",
           "input_states", "layer_geometry", "linear_cka", "pca_scores", "probe_layers",
           "labelled_words", "procrustes_rotation", "project_layers", "self_similarity",
           "treebank_input", "treebank_words"]
