"""Syntax: attention heads as dependency parsers (Clark et al. 2019, section 4) and structural
probes (Hewitt & Manning 2019), for any supported model (docs/METHODS.md section 10).

Modules: :mod:`.treebank` (CoNLL-U / Hugging Face treebanks -> Dataset, tree validation, the
bundled sample), :mod:`.words` (treebank words -> Encoding), :mod:`.passes` (one batched
forward over a treebank), :mod:`.heads` (head accuracies per relation, the offset baseline),
:mod:`.reading` (tables, examples, plain sentences), :mod:`.states` (word vectors of every
layer), :mod:`.trees` (tree distances, depths, MST, UUAS, Spearman), :mod:`.probes` (distance
and depth probes per layer), :mod:`.layered` (every layer's probe of one kind trained in one
loop), :mod:`.run` (a treebank run: heads alone, or heads and word vectors
from one forward), :mod:`.study` (the study's one interface: :data:`STUDY` the heads,
:data:`PROBES` the probes).
"""

from analysis.syntax.heads import (RelationResult, SyntaxResult, offset_baseline, predictions,
                                   relation_accuracy, sentence_attention, word_map)
from analysis.syntax.probes import (Probe, ProbeResult, example_tree, probe_layers,
                                    split_treebank, train_depth_probe, train_distance_probe)
from analysis.syntax.reading import compare_rows, example_sentences, reading, relation_rows
from analysis.syntax.run import syntax_heads, syntax_pass
from analysis.syntax.states import WordStates, extract_word_states
from analysis.syntax.study import PROBES, STUDY
from analysis.syntax.treebank import (SAMPLE_TREEBANK, read_conllu, read_hf_treebank,
                                      sample_treebank, treebank_fingerprint, validate_tree)
from analysis.syntax.words import encode_treebank, encode_words

__all__ = ["PROBES", "STUDY", "Probe", "ProbeResult", "RelationResult", "SAMPLE_TREEBANK",
           "SyntaxResult",
           "WordStates", "compare_rows", "encode_treebank", "encode_words", "example_sentences",
           "example_tree", "extract_word_states", "offset_baseline", "predictions",
           "probe_layers", "read_conllu", "read_hf_treebank", "reading", "relation_accuracy",
           "relation_rows", "sample_treebank", "sentence_attention", "split_treebank",
           "syntax_heads", "syntax_pass", "train_depth_probe", "train_distance_probe",
           "treebank_fingerprint", "validate_tree", "word_map"]
