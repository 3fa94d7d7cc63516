#!/usr/bin/env bash
# Installs what the tests need (Python packages in .venv; Debian's chromium for the browser
# tests, nginx as a real download server, strace for the network trace) and runs the whole suite. Extra arguments go to pytest.
# Under CI=true a missing tool is an error here, and a skipped browser/nginx/ENOSPC/netns/strace test fails.
source "$(dirname "$0")/_venv.sh" "[desktop,test]"
need=()
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || need+=(chromium)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v strace >/dev/null 2>&1 || need+=(strace)
if [ ${#need[@]} -gt 0 ]; then
  as_root=()
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      as_root=(sudo -n)  # sudo without a password
    else
      as_root=(none)
    fi
  fi
  if [ "${as_root[*]}" != none ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian packages: ${need[*]}" >&2
    "${as_root[@]}" apt-get update -qq
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    message="${need[*]} not installed, and neither root nor password-less sudo with apt-get is available to install it"
    case "${CI:-}" in
      1|true|TRUE|True|yes)
        echo "error: $message; CI needs the browser, nginx and strace tests to run (install: apt-get install ${need[*]})" >&2
        exit 1 ;;
      *) echo "note: $message: those tests will be skipped" >&2 ;;
    esac
  fi
fi
.venv/bin/ruff check app tests bench
# The whole suite (no arguments, as .ci/run runs it) on four workers: the browser tests first on three,
# a fourth at a low priority taking only tests without a browser (tests/conftest.py's scheduler):
# about 10 min on a quiet machine here, 25 in one process (docs/testing.md). With arguments, exactly what they say (one process unless they pass `-n`).
if [ $# -eq 0 ]; then
  set -- -n 4 --durations=25  # every run says where its time went (issue 36)
fi
exec .venv/bin/python -m pytest "$@"
