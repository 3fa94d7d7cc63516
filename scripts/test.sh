#!/usr/bin/env bash
# Installs what the tests need (Python packages in .venv; Debian's chromium for the browser
# tests and nginx as a real download server) and runs the whole suite. Extra arguments go to pytest.
# Under CI=true a missing tool is an error here, and a skipped browser/nginx/ENOSPC test fails.
source "$(dirname "$0")/_venv.sh" "[test]"
need=()
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || need+=(chromium)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
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
        echo "error: $message; CI needs the browser and nginx tests to run (install: apt-get install ${need[*]})" >&2
        exit 1 ;;
      *) echo "note: $message: those tests will be skipped" >&2 ;;
    esac
  fi
fi
.venv/bin/ruff check app tests bench
exec .venv/bin/python -m pytest "$@"
