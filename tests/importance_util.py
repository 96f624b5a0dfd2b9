"""Builders shared by the head importance tests: tiny classifiers (float64 where gradients are
compared with finite differences), a tiny ABSA checkpoint with a card, padded inputs."""

from __future__ import annotations

from pathlib import Path

TEXTS = [("the food was great but the service was slow", "food"),
         ("bad", "service"), ("a quiet room with friendly staff", "ambience")]


def tiny_classifier(num_labels: int = 3, layers: int = 2, dtype=None, seed: int = 0):
    """(model, tokenizer): a randomly initialised tiny BERT sequence classifier (eval mode)."""
    import torch
    import transformers as T

    from analysis.core.models import default_model_path

    torch.manual_seed(seed)
    cfg = T.BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=layers,
                       num_attention_heads=4, intermediate_size=37, max_position_embeddings=130,
                       num_labels=num_labels, initializer_range=0.2)
    model = T.AutoModelForSequenceClassification.from_config(cfg, attn_implementation="eager")
    if dtype is not None:
        model = model.to(dtype)
    model.eval()
    return model, T.AutoTokenizer.from_pretrained(default_model_path())


def pair_inputs(tokenizer, texts=TEXTS) -> dict:
    """Padded inputs of sentence pairs of different lengths."""
    return dict(tokenizer([a for a, _ in texts], [b for _, b in texts], padding=True,
                          return_tensors="pt"))


def tiny_checkpoint(folder: Path, task: str = "qa_m", **card_extra) -> Path:
    """A tiny ABSA checkpoint with its card (``card_extra`` added): a randomly initialised
    classifier of the task's labels (no training: the tests need its outputs, not good
    ones)."""
    from analysis.absa.checkpoints import make_card, save_checkpoint
    from analysis.absa.finetune import FineTuneResult
    from analysis.absa.tasks import default_pair_order, num_labels

    model, tok = tiny_classifier(num_labels(task))
    card = make_card("tiny", task, default_pair_order(task), "sample", 0, 1, 128,
                     FineTuneResult(model, tok, [1.0], 0.0, [], 0), **card_extra)
    return save_checkpoint(model, tok, folder, card)


_MADE: dict = {}


def cached_checkpoint(task: str = "qa_m") -> Path:
    """:func:`tiny_checkpoint` built once per test session (a temporary folder removed at
    exit)."""
    import tempfile

    if task not in _MADE:
        tmp = tempfile.TemporaryDirectory(prefix="importance-ck-")
        _MADE[task] = (tmp, tiny_checkpoint(Path(tmp.name) / "ck", task))
    return _MADE[task][1]


def tiny_absa(task: str = "qa_m", sentences: int = 8):
    """(loaded classifier, card, EvalSet) of the cached tiny checkpoint on the first
    ``sentences`` sentences of the bundled sample."""
    from analysis.absa.readers import load_sample
    from analysis.importance.evalset import absa_eval_set, load_classifier

    loaded, card = load_classifier(str(cached_checkpoint(task)))
    return loaded, card, absa_eval_set(loaded, card, load_sample().select(range(sentences)))


def classifier_folder(folder: Path) -> Path:
    """A tiny sequence classifier with labels neg / neu / pos saved with its tokenizer."""
    model, tok = tiny_classifier()
    model.config.id2label = {0: "neg", 1: "neu", 2: "pos"}
    model.config.label2id = {v: k for k, v in model.config.id2label.items()}
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


LABELLED_CSV = ("text,label\nthe food was great,pos\nthe service was slow,neg\nit was ok,neu\n"
                "awful,neg\nlovely place,pos\nfine,1\n")


def tiny_labelled(folder: Path):
    """(loaded classifier, EvalSet) of :func:`classifier_folder` on :data:`LABELLED_CSV`; its
    heads matter (initialised with a large spread), unlike those of the trained stand-in."""
    from analysis.importance.evalset import load_classifier, load_eval_set

    loaded, _ = load_classifier(str(classifier_folder(folder / "clf")))
    data = folder / "d.csv"
    data.write_text(LABELLED_CSV)
    return loaded, load_eval_set(loaded, None, str(data))


def stand_in_example(cache: Path) -> Path:
    """A tiny stand-in for the example checkpoint in the cache folder ``cache`` (set
    ``DASHBOARD_CACHE`` to it): the recipe's card, NLI-M, 6 held-out sentences of the sample."""
    from analysis.core.example import FOLDER, RECIPE, recipe_dict
    from analysis.absa.readers import load_sample

    held = list(load_sample()["id"][:6])
    return tiny_checkpoint(cache / FOLDER, RECIPE.task, example_recipe=recipe_dict(),
                           heldout_ids=held)
