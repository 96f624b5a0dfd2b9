"""The library behind the dashboard: plain Python (no Streamlit), importable from a notebook,
and the command line (``python -m analysis``).

Layers (``.importlinter``, checked by ``lint-imports``):

- the core, which imports no study: :mod:`.errors` (one plain line for the user),
  :mod:`.models` (a spec -> ``LoadedModel``; the size and weight checks of every loader),
  :mod:`.sizes` (a checkpoint's parameters from its config and safetensors header),
  :mod:`.hub` (is the hub reachable), :mod:`.example` (the example checkpoint),
  :mod:`.encoding` (text -> ``Encoding``), :mod:`.batching` (the one batcher),
  :mod:`.hooks` (every forward hook, thread-scoped), :mod:`.forward` (the one forward pass),
  :mod:`.maps` (one text's attention maps), :mod:`.measures` (per-head statistics),
  :mod:`.intervals` (bootstrap intervals over sentences), :mod:`.corpus` (every reader ->
  ``datasets.Dataset``), :mod:`.shards` (corpus jobs as map/merge), :mod:`.raydata` (the same
  jobs on a Ray cluster; optional) and :mod:`.child` (heavy work in a child process);
- the first tier of studies, independent of each other: :mod:`.attention`, :mod:`.noop`,
  :mod:`.aspects`, :mod:`.drift`, :mod:`.syntax`, :mod:`.report`;
- the second tier, which builds on the first tier's data and results (the ABSA held-out
  sentences and metrics, aspect and [SEP] heads, UPOS and ABSA roles), never the reverse, its
  members independent of each other: :mod:`.attribution`, :mod:`.importance`,
  :mod:`.representations`;
- the third tier (:mod:`.patching`, :mod:`.search`) and the fourth (:mod:`.features`, which
  reads the search corpus's labels and the importance study's classifier loader);
- :mod:`.cli` on top: the same calls with the same defaults, JSON out.

Each package's docstring lists its modules; docs/METHODS.md holds the formulas."""
