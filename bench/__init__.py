"""Benchmarks, organised like the code (bench/README.md): ``harness`` (the one harness every
benchmark uses), ``studies`` (one benchmark per study of analysis/), ``references`` (the plain
baselines they and the tests compare with), ``server`` (the demo server under load, hostile
visitors, CPU per action, caps) and ``sizes`` (every study at real model sizes, CUDA, Ray).
Run a benchmark from the repository root as a module: ``nice python -m bench.studies.noop``."""
