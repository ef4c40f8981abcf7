# Gatehouse: the web app (gunicorn with uvicorn workers, the default command) or, from the same
# image, a run worker.
#
# Unverified here: no Docker engine runs where this project is built and tested, so the image
# itself has never been built by the project. Its build steps live in docker/build.sh, which is
# run without Docker instead. See README.md, "Docker".

# --- Build stage: the virtual environment and the collected static files. ---
FROM python:3.12-slim AS build

ENV PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY requirements.txt ./
COPY docker/build.sh docker/build.sh
RUN docker/build.sh dependencies /opt/venv

COPY . .
RUN docker/build.sh static /opt/venv

# --- Runtime stage: Python, Graphviz, the app, a non-root user. ---
FROM python:3.12-slim

RUN apt-get update \
    && apt-get install -y --no-install-recommends graphviz \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --create-home --uid 10001 --user-group gatehouse

ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    GATEHOUSE_VAR_DIR=/app/var \
    PORT=8000 \
    WEB_CONCURRENCY=3 \
    GATEHOUSE_HEADER_TIMEOUT=10 \
    GATEHOUSE_KEEP_ALIVE_TIMEOUT=5 \
    MALLOC_ARENA_MAX=2

# MALLOC_ARENA_MAX: glibc gives each thread that allocates an arena of its own and keeps what it
# freed there, so a web process's threads (GATEHOUSE_WEB_THREADS, the streams' readers) hold the
# high-water mark of every large request for good; two arenas keep its memory near what it uses
# (docs/operations.md, "Memory").

WORKDIR /app
COPY --from=build /opt/venv /opt/venv
COPY --from=build /app /app
RUN mkdir -p /app/var && chown gatehouse:gatehouse /app/var

USER gatehouse
EXPOSE 8000
VOLUME ["/app/var"]

HEALTHCHECK --interval=30s --timeout=10s --start-period=20s --retries=3 \
    CMD ["python", "/app/docker/healthcheck.py"]

# Gunicorn binds 0.0.0.0:$PORT, starts $WEB_CONCURRENCY uvicorn workers (ASGI: a run's event
# stream waits without holding a thread, other requests share GATEHOUSE_WEB_THREADS threads per
# worker; docs/operations.md), and reads more options from GUNICORN_CMD_ARGS. The worker class
# closes a connection whose headers take over GATEHOUSE_HEADER_TIMEOUT seconds or that is silent
# between requests for GATEHOUSE_KEEP_ALIVE_TIMEOUT (the ENV above; it wins over gunicorn's
# --keep-alive, and gunicorn's --limit-request-* do not reach uvicorn workers). Behind a proxy,
# bound slow clients there too (docs/operations.md, "TLS and the proxy").
# The worker runs from the same image: python manage.py db_worker --no-reload
CMD ["gunicorn", "editor.asgi:application", "--worker-class", "editor.server.UvicornWorker", "--access-logfile", "-"]
