#!/usr/bin/env bash
# Installs Keyframe into .venv and starts it on the bundled demo model (works offline).
# Extra arguments go to `python -m app` (e.g. `ui --port 8600`).
source "$(dirname "$0")/_venv.sh" "[desktop]"
exec .venv/bin/python -m app "$@"
