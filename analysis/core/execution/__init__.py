"""Where heavy work runs, and in what order (no Streamlit: :mod:`ui.common.jobs` draws it).

The map:

- :mod:`.queue`: the one server-wide queue (lanes with running slots of their own, FIFO within
  a lane, the per-visitor cap, the exclusive training group, stop and leave) and
  :mod:`.estimates`, its measured rates and waits in words;
- :mod:`.work`: what a study hands over, ONE description of its work (a plain ``fn(progress)``,
  a :class:`~.work.Corpus` map/merge job over a dataset, a :class:`~.work.Study` of several
  corpus jobs, an :class:`~.work.Apart` training process); the token cap
  (:func:`~.work.capped`);
- :mod:`.corpus`: the map/merge shape of a corpus job (:class:`~.corpus.CorpusJob`,
  :func:`~.corpus.run_local`, :func:`~.corpus.run_sharded`);
- :mod:`.placements`: where a description runs, chosen once from the settings (in this
  process, with a training process in a child process: :mod:`.child`; or on a Ray cluster:
  :mod:`.cluster` over :mod:`.raydata`, Ray imported only then);
- :mod:`.worker`: the low-priority thread a queued job runs in, and background jobs;
- :mod:`.progress`: the ``done / total`` progress line of a job that counts items.

Rules: a study never decides where it runs (it hands one description); nothing here imports
Streamlit, and nothing imports Ray before a job runs on a cluster; a placement is the only
code that knows Ray or child processes exist.
"""
