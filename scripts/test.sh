#!/usr/bin/env bash
# Installs what the tests need (Python packages in .venv; Debian's chromium for the
# browser tests when run as root) and runs the whole suite. Extra arguments go to pytest.
source "$(dirname "$0")/_venv.sh" "[test]"
# Debian packages: chromium for the browser tests, nginx as a real download server.
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "note: ${need[*]} not installed and this is not root: those tests will be skipped" >&2
  fi
fi
.venv/bin/ruff check app tests bench
exec .venv/bin/python -m pytest "$@"
