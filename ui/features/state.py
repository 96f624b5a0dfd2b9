"""Every session key, URL parameter, widget key and cache key of the Features page, named once
(the page and the blocks use these constants, never a string key of their own)."""

from __future__ import annotations

from dataclasses import dataclass

from ui.common.frame.state import CorpusKeys

# Widgets bound to the URL (the key is the URL parameter)
MODEL = "f_model"      # the example checkpoint or the sidebar's model
LAYER = "f_layer"      # hidden_states index, 0 = the embeddings
FEATURE = "f_feature"  # the feature opened in the browser
SORT = "f_sort"        # frequency | effect
TAB = "f_tab"          # the open view
DATA = "f_data"        # sample | treebank | corpus (the corpus picker: sample, paste, upload, HF)
TEXT_CORPUS = CorpusKeys("f_text")  # the corpus picker's widgets (f_text_source, f_text_max...)
M = "f_m"              # features in a dictionary trained here (0: the default)
K = "f_k"              # features kept per token
EPOCHS = "f_epochs"
SEED = "f_seed"
COMPARE = "f_compare"  # train the crosscoder against the base model too

# Widget keys that are not in the URL
COPY = "f_copy"
CHART = "f-chart-{}"   # the page's charts (hist-N, effect-N, shares)
TRAIN = "f_train"
EFFECT = "f_effect"
DL = "dl-features-{}"
JSON = "f_json"
ADD = "features-{}"    # "Add to report" keys

# Session keys: the live results of this session, by cache key
RESULTS = "features_results"

# Job keys (ui.common.jobs)
JOB = "features-train"
JOB_KIND = "Features dictionary"

EXAMPLE, SIDEBAR = "Example checkpoint", "Sidebar model"
MODELS = [EXAMPLE, SIDEBAR]
SORTS = {"frequency": "how often it fires", "effect": "its effect on the classifier"}
TABS = ["Feature browser", "Per sentence", "Before and after", "All features"]
DATAS = {"sample": "ABSA sample (the classifier's pairs; aspect roles, labels)",
         "treebank": "Treebank sample (UPOS, dependency relations)",
         "corpus": "Your own corpus (paste, upload: text, CoNLL-U, ABSA; Hugging Face) or the "
                   "sample corpus"}
M_CHOICES = [0, 384, 768, 1536, 3072]
K_CHOICES = [8, 16, 32, 64]
EPOCH_CHOICES = [10, 20, 30, 50]


@dataclass(frozen=True)
class View:
    """The page's controls as read this run (typed)."""

    layer: int
    data: str
    m: int
    k: int
    epochs: int
    seed: int
    compare: bool
    corpus: str = ""  # the picked corpus's fingerprint (data "corpus"; "" for the others)

    def cache_key(self, spec: str, stamp: str, max_tokens: int) -> tuple:
        """What a live result is cached on (with the model's identity and token cap)."""
        return ("features", spec, stamp, max_tokens, self.layer, self.data, self.corpus,
                self.m, self.k, self.epochs, self.seed, self.compare)
