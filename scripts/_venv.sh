# Shared by run-app.sh and test.sh: make .venv and install the project into it — only when
# .venv is missing or pyproject.toml (or the extras asked for) changed since the last install,
# so every later start contacts no package index and works with no network at all.
# Usage: source scripts/_venv.sh "<extras>"   (extras like "[desktop,test]" or "[desktop]")
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# The Python versions every dependency publishes wheels for (pyproject.toml's requires-python).
PY_MIN=11
PY_MAX=14
pick_python() {
  local candidate
  for candidate in "${PYTHON:-}" python3 python3.14 python3.13 python3.12 python3.11; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c "import sys; sys.exit(0 if (3, $PY_MIN) <= sys.version_info[:2] <= (3, $PY_MAX) else 1)" 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  echo "Keyframe needs Python 3.$PY_MIN to 3.$PY_MAX (set PYTHON=/path/to/python3.X)" >&2
  return 1
}
if [ ! -x .venv/bin/python ]; then
  python="$(pick_python)"
  "$python" -m venv .venv
fi
# What the installed environment was made from: pyproject.toml and the interpreter. The stamp
# holds that hash and the extras installed with it; a later call asking for some of those extras
# ("[desktop]" after "[desktop,test]") installs nothing, so a start after the tests is offline.
stamp_of() {
  { cat pyproject.toml; .venv/bin/python -c 'import sys; print(sys.version)'; } |
    .venv/bin/python -c 'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())'
}
STAMP=.venv/.keyframe-install-stamp
want="$(stamp_of)"
have="$(sed -n 1p "$STAMP" 2>/dev/null || true)"
have_extras="$(sed -n 2p "$STAMP" 2>/dev/null || true)"
covered() {  # every extra named in $1 ("[a,b]") is among those in $2
  local wanted extra
  wanted="${1#[}"; wanted="${wanted%]}"
  local installed=",${2#[}"; installed="${installed%]},"
  IFS=, read -r -a wanted <<<"$wanted"
  for extra in "${wanted[@]+"${wanted[@]}"}"; do
    [ -z "$extra" ] || [[ "$installed" == *",$extra,"* ]] || return 1
  done
}
if [ "$have" != "$want" ] || ! covered "${1:-}" "$have_extras"; then
  echo "installing Keyframe's dependencies into .venv (only when .venv is new or pyproject.toml changed;" \
    "the first time downloads a few hundred MB: Flet, MNN, OpenCV, NumPy) ..." >&2
  export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
  if [ -t 2 ]; then
    # A person is watching: pip's own progress (what it fetches, and how far), on stderr.
    .venv/bin/python -m pip install --quiet --upgrade pip >&2
    .venv/bin/python -m pip install --progress-bar on -e ".${1:-}" >&2
  else
    # A log (CI): no progress bars; pip's errors still show.
    .venv/bin/python -m pip install --quiet --quiet --upgrade pip >/dev/null
    .venv/bin/python -m pip install --quiet --quiet -e ".${1:-}" >/dev/null
  fi
  printf '%s\n%s\n' "$want" "${1:-}" >"$STAMP"
fi
