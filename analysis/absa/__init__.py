"""Aspect-based sentiment analysis as sentence pairs (Sun et al. 2019): the data, the tasks,
fine-tuning and the checkpoints it writes (docs/METHODS.md sections 6 and 7). Not a study: the
Aspect heads study (:mod:`analysis.aspects`) and the studies that use the ABSA sample or a
fine-tuned pair classifier (attribution, importance, patching, search, ...) build on it.

- :mod:`.data`: the one row schema, validation, opinion linking, the held-out split;
- :mod:`.readers`: SemEval-2014/2016 XML, ASTE triplets, this project's JSON, the sample;
- :mod:`.tasks`: the four auxiliary-sentence tasks, their pairs and the paper's metrics;
- :mod:`.finetune`: a classifier copy, its training and evaluation (heads maskable);
- :mod:`.checkpoints`: the checkpoint folder and its card;
- :mod:`.pipeline`: fine-tune -> held-out evaluation -> card -> save (page and CLI);
- :mod:`.example`: the example checkpoint's build from its recipe (:mod:`analysis.core.example`
  says where it lives and with which recipe) and its loading with classifier and card;
- :mod:`.zips`: a model's download .zip, built once and shared.
"""
