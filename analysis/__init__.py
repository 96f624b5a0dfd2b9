"""The library behind the dashboard: plain Python (no Streamlit), importable from a notebook,
and the command line (``python -m analysis``).

Layers (``.importlinter``, checked by ``lint-imports``):

- :mod:`.core`, which imports no study: errors, models, sizes, hub, the example, cards, the one
  path from a corpus to a forward pass (encoding, batching, hooks, forward), maps, measures,
  intervals, every corpus reader, where heavy work runs (execution) and the study interface;
- :mod:`.absa`: aspect-based sentiment data, tasks, fine-tuning and checkpoints (no study);
- the first tier of studies, independent of each other: :mod:`.attention`, :mod:`.noop`,
  :mod:`.aspects`, :mod:`.drift`, :mod:`.syntax`, :mod:`.report`;
- the second tier, which builds on the first tier's data and results (the ABSA held-out
  sentences and metrics, aspect and [SEP] heads, UPOS and ABSA roles), never the reverse, its
  members independent of each other: :mod:`.attribution`, :mod:`.importance`,
  :mod:`.representations`; the third tier builds on the second: :mod:`.patching`,
  :mod:`.search`; the fourth on the third: :mod:`.features` (the search corpus's labels and
  the importance study's classifier loader);
- :mod:`.atlas` above every study: their results joined head by head (its :mod:`.atlas.facts`,
  which imports no study, is what the studies' readings name heads with);
- :mod:`.cli` on top: the same calls with the same defaults, JSON out.

Each package's docstring lists its modules; docs/METHODS.md holds the formulas."""
