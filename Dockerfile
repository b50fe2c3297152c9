# The pipeline image. One image, two roles chosen by the command: the worker (`om run`) and the
# reader service (`om reader serve`); docker-compose.yml sets which.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    LITELLM_LOCAL_MODEL_COST_MAP=True \
    OM_DATA_DIR=/var/lib/om

WORKDIR /src

# Dependencies first, from pyproject.toml alone, so that a code change reuses this (large) layer.
COPY pyproject.toml README.md ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > requirements.txt \
    && pip install -r requirements.txt

COPY schemas ./schemas
COPY processors ./processors
COPY streams ./streams
RUN pip install --no-deps . && rm -rf /src

# Run unprivileged; OM_DATA_DIR (local state such as worker table stores) is its home.
RUN useradd --system --uid 10001 --create-home --home-dir /var/lib/om om
USER om
WORKDIR /var/lib/om

CMD ["om", "run"]
