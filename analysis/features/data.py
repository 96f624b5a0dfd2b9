"""Models and corpora of the features study, as the CLI and the page both read them, and the
example's defaults (the layer, the settings, the dictionary shipped for it).

- a model spec: a classifier (the example checkpoint, a checkpoint folder of this dashboard
  with its ABSA card, any fine-tuned sequence classifier) is loaded with its task head, so
  that splice fidelity and class effects read its predictions; any other encoder as it is;
- data: ``sample`` (the bundled ABSA sample), ``treebank`` (the bundled treebank sample),
  ``corpus`` (the bundled sample corpus), or a file read as the Search page reads an upload
  (:func:`analysis.search.corpus.read_data`).
"""

from __future__ import annotations

from pathlib import Path

from analysis.core.errors import InputError
from analysis.features.corpus import FeatureCorpus, feature_corpus
from analysis.features.sae import SAE
from analysis.features.train import TrainSettings
from analysis.core.models import EXAMPLE_SPEC, load_config, load_model, normalise_spec

BUNDLED = {"sample": "the bundled ABSA sample", "treebank": "the bundled treebank sample",
           "corpus": "the bundled sample corpus"}
# The example's dictionary (shipped in data/precomputed/features/): the middle layer of the
# 6-layer embedded model, a dictionary twice as wide as the model (768 features; float16 on
# disk, 1.2 MB), k = 32, trained on the classifier's own pairs of the sample's training reviews.
EXAMPLE_LAYER = 3
EXAMPLE_SETTINGS = TrainSettings(m=768, k=32, epochs=30, batch_size=512, seed=0)
PRECOMPUTED = Path(__file__).resolve().parents[2] / "data" / "precomputed" / "features"


def is_classifier_spec(spec: str) -> bool:
    # lazy: the ABSA checkpoint reader is only needed for a folder
    from analysis.absa.checkpoints import is_checkpoint

    spec = normalise_spec(spec)
    if spec == EXAMPLE_SPEC or is_checkpoint(spec):
        return True
    archs = list(getattr(load_config(spec), "architectures", None) or [])
    return any(a.endswith("ForSequenceClassification") for a in archs)


def load_models(spec: str):
    """(LoadedModel, ABSA card or None): a classifier with its task head, else the encoder."""
    if is_classifier_spec(spec):
        # lazy: the classifier loader lives in the importance study
        from analysis.importance.evalset import load_classifier

        return load_classifier(spec)
    return load_model(spec), None


def read_dataset(source: str, max_examples: int | None = None):
    """A Dataset from a bundled name or a file (module docstring)."""
    if source == "sample":
        # lazy: the ABSA reader loads only when its data is asked for
        from analysis.absa.readers import load_sample

        ds = load_sample()
    elif source == "treebank":
        # lazy: the treebank reader loads only when its data is asked for
        from analysis.syntax.treebank import sample_treebank

        ds = sample_treebank()
    elif source == "corpus":
        # lazy: the corpus reader loads only when its data is asked for
        from analysis.core.corpus import sample_corpus

        ds = sample_corpus()
    else:
        # lazy: the search study's reader of every kind of file
        from analysis.search.corpus import read_data, with_lines

        ds = with_lines(*read_data(source, max_examples=max_examples))
    if max_examples is not None and len(ds) > max_examples:
        ds = ds.select(range(int(max_examples)))
    return ds


def corpus_of(source: str, card: dict | None, seed: int = 0,
              max_examples: int | None = None) -> FeatureCorpus:
    name = BUNDLED.get(source, Path(source).name)
    return feature_corpus(read_dataset(source, max_examples), name, card, seed)


def default_layer(loaded) -> int:
    """The middle layer (hidden_states index), the example's default."""
    return max(1, int(loaded.n_layers) // 2)


def check_layer(layer: int, loaded) -> int:
    if not 0 <= int(layer) <= int(loaded.n_layers):
        raise InputError(f"The layer must be from 0 (the embeddings) to {loaded.n_layers}, "
                         f"not {layer}.")
    return int(layer)


def shipped_dictionary() -> SAE | None:
    """The example's dictionary shipped with the project, or None when absent."""
    try:
        return SAE.load(PRECOMPUTED)
    except Exception:  # a missing or damaged file: the page trains instead
        return None
