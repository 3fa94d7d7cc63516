#!/usr/bin/env bash
# Installs what the tests need (Python packages in .venv; Debian's chromium for the
# browser tests when run as root) and runs the whole suite. Extra arguments go to pytest.
source "$(dirname "$0")/_venv.sh" "[test]"
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "note: chromium is not installed and this is not root: browser tests will be skipped" >&2
  fi
fi
exec .venv/bin/python -m pytest "$@"
