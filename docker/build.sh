#!/usr/bin/env bash
# The build steps of the Docker image, kept here so that they can be run, and tested, without
# Docker (the Dockerfile calls this script and does little else).
#
#   docker/build.sh dependencies VENV   create the virtual environment VENV, install requirements.txt
#   docker/build.sh static VENV         collect static files into staticfiles/ with VENV's Python
#
# Run from the project directory. PYTHON picks the interpreter for a new VENV (default: python3).
set -euo pipefail

usage() {
    echo "usage: $0 {dependencies|static} VENV" >&2
    exit 2
}

[ $# -eq 2 ] || usage
step=$1
venv=$2

case "$step" in
dependencies)
    "${PYTHON:-python3}" -m venv "$venv"
    # The Dockerfile sets PIP_NO_CACHE_DIR so the image carries no pip cache.
    "$venv/bin/python" -m pip install --disable-pip-version-check --quiet -r requirements.txt
    ;;
static)
    # collectstatic only reads settings: these values exist for the build and are not kept.
    DEBUG=false SECRET_KEY=collectstatic-only ALLOWED_HOSTS=localhost DATABASE_URL=sqlite:///:memory: \
        "$venv/bin/python" manage.py collectstatic --no-input --clear --verbosity 0
    ;;
*)
    usage
    ;;
esac
