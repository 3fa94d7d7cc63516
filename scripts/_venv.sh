# Shared by run-app.sh and test.sh: make .venv with Python 3.11 and install the project.
# Usage: source scripts/_venv.sh "<extras>"   (extras like "[test]" or "")
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
pick_python() {
  for candidate in "${PYTHON:-}" python3.11 python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  echo "Keyframe needs Python 3.11 (set PYTHON=/path/to/python3.11)" >&2
  return 1
}
if [ ! -x .venv/bin/python ]; then
  "$(pick_python)" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".${1:-}"
