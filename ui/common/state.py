"""The keys of the blocks still directly in ``ui.common`` (the jobs' display), named once. The
page frame's keys are in ``ui/common/frame/state.py``, the exports' in
``ui/common/exports/state.py``."""

EXAMPLE_BUILD_JOB = "example-build"  # the example checkpoint's background build
