"""The plain references the studies' benchmarks and the tests compare with, one module per
study: the definition computed the slow, obvious way (one example, one ablation, one probe at a
time). Not used by the app."""
