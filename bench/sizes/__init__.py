"""Every study at real model sizes: the stand-in models (``standins``), the table of every
study against its floor (``run``; its rows in ``rows``, their inputs, floors and peak memory in
``inputs``), the largest steps' peak memory (``memory``), the CUDA path (``cuda``,
``cuda_studies``, ``cuda_prep``, ``gpu_sizes.sh``) and a local Ray cluster (``scale``)."""
