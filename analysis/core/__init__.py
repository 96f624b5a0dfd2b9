"""The core every study builds on; it imports no study.

- :mod:`.errors`: one plain line for the user (``InputError``, ``DataError``);
- :mod:`.models`: a spec -> ``LoadedModel``, the size and weight checks of every loader;
- :mod:`.sizes`: a checkpoint's parameters from its config and safetensors header;
- :mod:`.cost`: a corpus job's seconds before it runs, from the model's shape and its tokens
  (the demo's per-study caps);
- :mod:`.bytecache`: caches bounded by the bytes they hold, server-wide and per owner;
- :mod:`.hub`: whether the Hugging Face hub is reachable;
- :mod:`.example`: the example checkpoint (where it lives, its recipe, whether it is built)
  and the precomputed results shipped for it;
- :mod:`.cards`: a checkpoint's card (what was trained, frozen, capped);
- :mod:`.encoding` (text -> ``Encoding``), :mod:`.batching` (the one batcher),
  :mod:`.hooks` (every forward hook, thread-scoped), :mod:`.forward` (the one forward pass):
  the one path from a corpus to a forward pass;
- :mod:`.maps` (one text's attention maps), :mod:`.measures` (per-head statistics),
  :mod:`.intervals` (bootstrap intervals over sentences);
- :mod:`.corpus`: every reader -> ``datasets.Dataset``;
- :mod:`.execution`: where heavy work runs (the queue, placements: here, a child process or a
  Ray cluster) and the descriptions of work a study hands over;
- :mod:`.study`: the one interface of every study (typed inputs -> one typed result whose JSON
  schema is declared once).
"""
