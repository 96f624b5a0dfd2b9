# The public demo of the attention dashboard (deploy/README.md): Python 3.11, CPU torch, demo
# mode, the example checkpoint built into the image, run as a non-root user on port 8501.
# The build and start steps are deploy/check.py's, the same script CI runs in a fresh venv.
FROM python:3.11-slim

# The CPU build of the pinned torch (requirements.txt: torch==2.13.0); PyPI's Linux wheel
# would pull the CUDA packages (GBs). Only used while building.
ARG PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DASHBOARD_MODE=demo \
    DASHBOARD_CACHE=/app/cache \
    HF_HOME=/app/cache/huggingface \
    OMP_NUM_THREADS=2 \
    STREAMLIT_BROWSER_GATHER_USAGE_STATS=false

# uid 1000: the user Hugging Face Spaces runs a Docker Space's container as
RUN useradd --create-home --uid 1000 app \
    && mkdir -p /app/cache \
    && chown -R app:app /app
WORKDIR /app

# dependencies first (a layer that survives code changes), installed as root, read-only to app,
# at the pinned versions of constraints.txt (the ones CI tests; bash .ci/lock refreshes them)
COPY requirements.txt constraints.txt deploy/check.py ./deploy-build/
RUN python deploy-build/check.py install --requirements deploy-build/requirements.txt \
    && rm -rf deploy-build

COPY --chown=app:app . /app
USER app
# the example checkpoint, built now so that the Aspect heads and Drift pages open on it
# (about 3 minutes on 2 cores); then a start in demo mode that must answer /_stcore/health
RUN python deploy/check.py example && python deploy/check.py smoke

EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=10s --start-period=90s --retries=3 \
    CMD ["python", "deploy/check.py", "health"]
# streamlit run app.py in demo mode: --server.address=0.0.0.0 --server.port=8501 (or $PORT)
# --server.fileWatcherType=none --server.maxUploadSize=50 (MiB: the checkpoint .zip, the
# same as .streamlit/config.toml; ui/common/settings.py SERVER_UPLOAD_MB)
CMD ["python", "deploy/check.py", "start"]
