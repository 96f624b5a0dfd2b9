"""The Aspects study: aspect-based sentiment as sentence pairs (Sun et al. 2019), fine-tuning,
and the heads that attend to aspects (docs/METHODS.md sections 6 to 8).

- :mod:`.data`: the one row schema, validation, opinion linking, the held-out split;
- :mod:`.readers`: SemEval-2014/2016 XML, ASTE triplets, this project's JSON, the sample;
- :mod:`.tasks`: the four auxiliary-sentence tasks, their pairs and the paper's metrics;
- :mod:`.finetune`: a classifier copy, its training and evaluation (heads maskable);
- :mod:`.checkpoints`: the checkpoint folder and its card;
- :mod:`.pipeline`: fine-tune -> held-out evaluation -> card -> save (page and CLI);
- :mod:`.heads`, :mod:`.baselines`, :mod:`.causal`: aspect-head discovery, its baselines and
  the masking check.
"""
