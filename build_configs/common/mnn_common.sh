# shellcheck shell=bash
# Shared steps of build_configs/{android,ios}/build_mnn_wheel.sh. Sourced, not run.
#
# Inputs (environment, all optional):
#   MNN_REPO      git URL of MNN             (default https://github.com/alibaba/MNN.git)
#   MNN_REF       tag to build               (default 3.6.1)
#   MNN_VERSION   version the tag must carry (default 3.6.1, checked in include/MNN/MNNDefine.h)
#   LOCAL_VERSION local version label        (default keyframe1 -> wheel version 3.6.1+keyframe1)
#   WORK_DIR      scratch folder, outside the repository (default ${TMPDIR:-/tmp}/keyframe-mnn)
#   WHEELHOUSE    where wheels are written   (default $WORK_DIR/wheelhouse; pass it to PIP_FIND_LINKS)
#   JOBS          parallel compile jobs      (default: CPU count)
#   PYTHON        host Python >= 3.9 for the helper scripts (default python3)
#   PY_VERSION    CPython version of the app  (default $APP_PYTHON, else 3.12 -> cp312 wheels)
# The build scripts also take the wheelhouse as their only argument: build_mnn_wheel.sh wheelhouse/

set -euo pipefail

KF_CONFIGS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MNN_REPO="${MNN_REPO:-https://github.com/alibaba/MNN.git}"
MNN_REF="${MNN_REF:-3.6.1}"
MNN_VERSION="${MNN_VERSION:-3.6.1}"
LOCAL_VERSION="${LOCAL_VERSION:-keyframe1}"
WORK_DIR="${WORK_DIR:-${TMPDIR:-/tmp}/keyframe-mnn}"
WHEELHOUSE="${WHEELHOUSE:-${WORK_DIR}/wheelhouse}"
PYTHON="${PYTHON:-python3}"
if [[ -z "${JOBS:-}" ]]; then
    JOBS="$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 4)"
fi
# CPython the app bundles: flet-cli 1.0.5 offers 3.12-3.14 and docs/packaging.md's build
# configuration passes --python-version 3.12, so the wheels default to cp312.
PY_VER="${PY_VERSION:-${APP_PYTHON:-3.12}}"
PY_TAG="cp${PY_VER/./}"

# `build_mnn_wheel.sh [WHEELHOUSE]`: the argument, if any, wins over $WHEELHOUSE; made absolute.
take_wheelhouse_arg() {
    if [[ $# -gt 1 ]]; then
        die "usage: $(basename "$0") [WHEELHOUSE]"
    fi
    if [[ $# -eq 1 ]]; then
        WHEELHOUSE="$1"
    fi
    mkdir -p "${WHEELHOUSE}"
    WHEELHOUSE="$(cd "${WHEELHOUSE}" && pwd)"
}

log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "'$1' is not installed (needed: $2)"; }

# CMake flags every platform shares (docs/packaging.md explains each).
mnn_common_cmake_flags() {
    printf '%s\n' \
        -DCMAKE_BUILD_TYPE=Release \
        -DMNN_BUILD_SHARED_LIBS=OFF \
        -DMNN_SEP_BUILD=OFF \
        -DMNN_BUILD_CONVERTER=OFF \
        -DMNN_BUILD_TRAIN=OFF \
        -DMNN_BUILD_TOOLS=OFF \
        -DMNN_BUILD_QUANTOOLS=OFF \
        -DMNN_BUILD_DEMO=OFF \
        -DMNN_BUILD_BENCHMARK=OFF \
        -DMNN_BUILD_TEST=OFF \
        -DMNN_LOW_MEMORY=ON \
        -DMNN_SUPPORT_TRANSFORMER_FUSE=ON \
        -DMNN_BUILD_LLM=ON \
        -DMNN_BUILD_LLM_OMNI=ON \
        -DMNN_BUILD_OPENCV=ON \
        -DMNN_IMGCODECS=ON \
        -DMNN_AAPL_FMWK=OFF
}

# Clone MNN at $MNN_REF into $WORK_DIR/MNN (once), check its version, apply our patches.
mnn_fetch_and_patch() {
    need git "fetching the MNN source"
    mkdir -p "${WORK_DIR}"
    MNN_SRC="${WORK_DIR}/MNN"
    if [[ ! -d "${MNN_SRC}/.git" ]]; then
        log "cloning ${MNN_REPO} at ${MNN_REF}"
        git clone --depth 1 --branch "${MNN_REF}" "${MNN_REPO}" "${MNN_SRC}"
    fi
    local define="${MNN_SRC}/include/MNN/MNNDefine.h" major minor patch
    major="$(awk '/#define MNN_VERSION_MAJOR/ {print $3}' "${define}")"
    minor="$(awk '/#define MNN_VERSION_MINOR/ {print $3}' "${define}")"
    patch="$(awk '/#define MNN_VERSION_PATCH/ {print $3}' "${define}")"
    [[ "${major}.${minor}.${patch}" == "${MNN_VERSION}" ]] \
        || die "${MNN_REF} says version ${major}.${minor}.${patch}, expected ${MNN_VERSION}"
    local p
    for p in "${KF_CONFIGS_DIR}"/patches/*.patch; do
        if git -C "${MNN_SRC}" apply --reverse --check "${p}" >/dev/null 2>&1; then
            log "already applied: $(basename "${p}")"
            continue
        fi
        log "applying $(basename "${p}")"
        git -C "${MNN_SRC}" apply --verbose "${p}" \
            || die "$(basename "${p}") does not apply to ${MNN_REF}; see the instructions at the top of the patch"
    done
}

# Include folder of numpy's C headers for the target platform, from the same mobile
# wheel index that `flet build` installs numpy from. $1 = wheel platform tag.
numpy_include_for() {
    local plat="$1" dest="${WORK_DIR}/numpy-${1}"
    if [[ -z "$(find "${dest}" -name arrayobject.h -print -quit 2>/dev/null)" ]]; then
        log "downloading numpy headers for ${plat}"
        rm -rf "${dest}" && mkdir -p "${dest}/whl"
        "${PYTHON}" -m pip download --disable-pip-version-check --no-deps --only-binary :all: \
            --platform "${plat}" --python-version "${PY_VER}" \
            --extra-index-url "${FLET_MOBILE_INDEX:-https://pypi.flet.dev}" \
            -d "${dest}/whl" "numpy${NUMPY_SPEC:-}" >&2
        "${PYTHON}" -m zipfile -e "${dest}"/whl/numpy-*.whl "${dest}/tree"
    fi
    local header
    header="$(find "${dest}" -path '*numpy/*include/numpy/arrayobject.h' -print -quit)"
    [[ -n "${header}" ]] || die "no numpy headers in the numpy wheel for ${plat}"
    dirname "$(dirname "${header}")"
}

# The CPython distribution flet bundles (flet-dev/python-build), downloaded into $WORK_DIR
# when the caller did not point at one. $1 = asset name pattern with {full} for the full
# Python version, e.g. "python-android-dart-{full}-arm64-v8a.tar.gz". Prints the folder.
# Release date and full version come from the installed flet-cli (its pinned manifest),
# or from FLET_PYTHON_BUILD_RELEASE_DATE / PYTHON_FULL_VERSION.
python_build_dist() {
    local pattern="$1" date full asset dest
    need curl "downloading flet's Python distribution"
    date="${FLET_PYTHON_BUILD_RELEASE_DATE:-}"
    if [[ -z "${date}" ]]; then
        date="$("${PYTHON}" -c 'from flet_cli.utils.python_versions import _resolve_release_date as d; print(d())' \
            2>/dev/null)" || die "install flet-cli (pip install flet-cli) or set FLET_PYTHON_BUILD_RELEASE_DATE"
    fi
    full="${PYTHON_FULL_VERSION:-}"
    if [[ -z "${full}" ]]; then
        full="$("${PYTHON}" -c 'import sys; from flet_cli.utils.python_versions import get_release as g; print(g(sys.argv[1]).standalone)' \
            "${PY_VER}" 2>/dev/null)" || die "flet-cli cannot name the full version of Python ${PY_VER}; set PYTHON_FULL_VERSION"
    fi
    asset="${pattern//\{full\}/${full}}"
    dest="${WORK_DIR}/python-build/${date}/${asset%.tar.gz}"
    if [[ ! -d "${dest}" ]]; then
        log "downloading ${asset} (python-build ${date})"
        mkdir -p "${dest}.tmp"
        curl -fL --retry 3 -o "${dest}.tmp/${asset}" \
            "https://github.com/flet-dev/python-build/releases/download/${date}/${asset}"
        tar -xzf "${dest}.tmp/${asset}" -C "${dest}.tmp"
        rm -f "${dest}.tmp/${asset}"
        mv "${dest}.tmp" "${dest}"
    fi
    printf '%s\n' "${dest}"
}

# Folder holding Python.h for Python $PY_VER under $1 ($2: optional path fragment to prefer).
find_python_include() {
    local root="$1" prefer="${2:-}" h
    if [[ -n "${prefer}" ]]; then
        h="$(find "${root}" -name Python.h -path "*${prefer}*" -print -quit 2>/dev/null)"
    fi
    if [[ -z "${h:-}" ]]; then
        h="$(find "${root}" -name Python.h -print -quit 2>/dev/null)"
    fi
    [[ -n "${h}" ]] || return 1
    dirname "${h}"
}

# Preprocessor flags and sources for _mnncengine (what upstream setup.py passes,
# minus training/audio/tools). Prints one argument per line.
pymnn_compile_args() {
    local src="$1" build="$2" numpy_inc="$3"
    printf '%s\n' \
        -std=c++17 -O2 -fPIC -fvisibility=hidden \
        -Wno-unused-parameter -Wno-missing-field-initializers -Wno-write-strings \
        -Wno-deprecated-declarations -fno-strict-aliasing \
        -DPYMNN_EXPR_API -DPYMNN_NUMPY_USABLE -DPYMNN_OPENCV_API -DPYMNN_LLM_API -DBUILD_OPTYPE \
        "-I${src}/include" "-I${src}/express" "-I${src}/express/module" "-I${src}/source" \
        "-I${src}/tools" "-I${src}/tools/cv/include" "-I${src}/source/core" "-I${src}/schema/current" \
        "-I${src}/3rd_party/flatbuffers/include" "-I${src}/3rd_party" \
        "-I${src}/transformers/llm/engine/include" "-I${build}" \
        "-I${numpy_inc}"
}

# Static archives to link whole (op registration lives in static initialisers).
mnn_static_archives() {
    local build="$1" name found
    for name in libMNN.a libllm.a libMNNOpenCV.a libMNN_Express.a libMNN_CL.a libMNNAudio.a; do
        found="$(find "${build}" -name "${name}" -not -path '*/CMakeFiles/*' -print -quit)"
        if [[ -n "${found}" ]]; then
            printf '%s\n' "${found}"
        fi
    done
}

# Wheel from a linked extension. $1 = extension, $2 = platform tag.
assemble_wheel() {
    local ext="$1" plat="$2"
    mkdir -p "${WHEELHOUSE}"
    "${PYTHON}" "${KF_CONFIGS_DIR}/common/make_wheel.py" \
        --ext "${ext}" --package "${MNN_SRC}/pymnn/pip_package/MNN" \
        --name MNN --version "${MNN_VERSION}+${LOCAL_VERSION}" \
        --python-tag "${PY_TAG}" --platform-tag "${plat}" -o "${WHEELHOUSE}"
}
