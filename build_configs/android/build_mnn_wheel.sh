#!/usr/bin/env bash
# Cross-build MNN 3.6.1's Python binding for Android arm64-v8a (API 24) as the wheel
#   mnn-3.6.1+keyframe1-cp312-cp312-android_24_arm64_v8a.whl   (PY_VERSION=3.11 -> cp311)
# that `flet build apk|aab` installs when PIP_FIND_LINKS points at $WHEELHOUSE.
#
# Host: Linux x86_64 (or macOS) with git, cmake >= 3.18, ninja or make, Python 3 with pip,
# and the Android NDK (r27 or newer recommended: 16 KB page-size support).
#
# Environment:
#   ANDROID_NDK_HOME    NDK root (ANDROID_NDK_ROOT is accepted too); required
#   PYTHON_ANDROID_DIR  the Android CPython the app embeds ($PY_VERSION, default 3.12), arm64-v8a,
#                       with Python.h and libpython3.12.so somewhere below it. Unset: flet's own
#                       python-android-dart-<full>-arm64-v8a.tar.gz of the python-build release the
#                       installed flet-cli pins is downloaded (stops if it carries no headers).
#                       (the same build serious-python bundles for your flet version)
# Usage: build_mnn_wheel.sh [WHEELHOUSE]   (default $WHEELHOUSE, see mnn_common.sh)
# Optional: see build_configs/common/mnn_common.sh (MNN_REF, LOCAL_VERSION, WORK_DIR,
#   WHEELHOUSE, JOBS, PYTHON, NUMPY_SPEC e.g. "==2.2.4", FLET_MOBILE_INDEX).
#
# Steps: clone MNN at the tag -> apply build_configs/patches -> static libMNN with the NDK
# toolchain (OpenCL, logcat, LLM + Omni, OpenCV, image codecs; no converter/tools/train)
# -> compile pymnn/src/MNN.cc against it -> link _mnncengine.so (16 KB pages) -> wheel.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../common/mnn_common.sh
source "${here}/../common/mnn_common.sh"
take_wheelhouse_arg "$@"

ABI="arm64-v8a"
API_LEVEL="24"
PLATFORM_TAG="android_${API_LEVEL}_arm64_v8a"
NDK="${ANDROID_NDK_HOME:-${ANDROID_NDK_ROOT:-}}"
[[ -n "${NDK}" && -f "${NDK}/build/cmake/android.toolchain.cmake" ]] \
    || die "set ANDROID_NDK_HOME to an Android NDK (r27+); no toolchain file under '${NDK}'"
# The Android CPython the app embeds: $PYTHON_ANDROID_DIR, else flet's own distribution.
PY_DIR="${PYTHON_ANDROID_DIR:-}"
if [[ -z "${PY_DIR}" ]]; then
    PY_DIR="$(python_build_dist "python-android-dart-{full}-${ABI}.tar.gz")"
fi
PY_INC="$(find_python_include "${PY_DIR}" "python${PY_VER}")" \
    || die "no Python.h under ${PY_DIR}: set PYTHON_ANDROID_DIR to an Android CPython ${PY_VER} build with headers"
PY_LIB="$(find "${PY_DIR}" -name "libpython${PY_VER}.so" -print -quit)"
[[ -n "${PY_LIB}" ]] || die "no libpython${PY_VER}.so under ${PY_DIR}"
need cmake "configuring MNN"
"${PYTHON}" -m pip --version >/dev/null 2>&1 || die "${PYTHON} has no pip (needed for numpy headers)"

case "$(uname -s)" in
    Linux) host_tag="linux-x86_64" ;;
    Darwin) host_tag="darwin-x86_64" ;;
    *) die "unsupported host $(uname -s)" ;;
esac
toolchain="${NDK}/toolchains/llvm/prebuilt/${host_tag}/bin"
CXX="${toolchain}/aarch64-linux-android${API_LEVEL}-clang++"
READELF="${toolchain}/llvm-readelf"
[[ -x "${CXX}" ]] || die "no ${CXX}"

generator=()
if command -v ninja >/dev/null 2>&1; then
    generator=(-G Ninja)
fi

start=${SECONDS}
mnn_fetch_and_patch
BUILD="${WORK_DIR}/build-android-${ABI}"

log "configuring MNN for ${ABI} (API ${API_LEVEL})"
IFS=$'\n' read -r -d '' -a common_flags < <(mnn_common_cmake_flags) || true
cmake -S "${MNN_SRC}" -B "${BUILD}" ${generator[@]+"${generator[@]}"} \
    "${common_flags[@]}" \
    -DCMAKE_TOOLCHAIN_FILE="${NDK}/build/cmake/android.toolchain.cmake" \
    -DANDROID_ABI="${ABI}" \
    -DANDROID_PLATFORM="android-${API_LEVEL}" \
    -DANDROID_STL=c++_static \
    -DANDROID_SUPPORT_FLEXIBLE_PAGE_SIZES=ON \
    -DMNN_BUILD_FOR_ANDROID_COMMAND=ON \
    -DMNN_USE_LOGCAT=ON \
    -DMNN_OPENCL=ON \
    -DMNN_ARM82=ON \
    -DCMAKE_SHARED_LINKER_FLAGS="-Wl,-z,max-page-size=16384"

log "building libMNN (${JOBS} jobs)"
cmake --build "${BUILD}" --parallel "${JOBS}"

numpy_inc="$(numpy_include_for "${PLATFORM_TAG}")"
IFS=$'\n' read -r -d '' -a cflags < <(pymnn_compile_args "${MNN_SRC}" "${BUILD}" "${numpy_inc}") || true
IFS=$'\n' read -r -d '' -a archives < <(mnn_static_archives "${BUILD}") || true
[[ ${#archives[@]} -gt 0 ]] || die "no libMNN.a under ${BUILD}"
log "linking archives: ${archives[*]}"

out="${BUILD}/pymnn"
mkdir -p "${out}"
log "compiling pymnn/src/MNN.cc"
"${CXX}" "${cflags[@]}" "-I${PY_INC}" \
    -c "${MNN_SRC}/pymnn/src/MNN.cc" -o "${out}/MNN.o"
"${CXX}" -shared -o "${out}/_mnncengine.so" "${out}/MNN.o" \
    -Wl,--whole-archive "${archives[@]}" -Wl,--no-whole-archive \
    "-L$(dirname "${PY_LIB}")" "-lpython${PY_VER}" \
    -llog -landroid -ldl -lm -static-libstdc++ \
    -Wl,-z,max-page-size=16384 -Wl,-z,common-page-size=16384 \
    -Wl,--no-undefined -Wl,--exclude-libs,ALL -Wl,--gc-sections -Wl,-s

# Checks: no C++ runtime or OpenCL link-time dependency (MNN opens libOpenCL.so at run
# time), every LOAD segment aligned to 16 KB.
needed="$("${READELF}" -d "${out}/_mnncengine.so" | awk '/NEEDED/ {print $NF}' | tr -d '[]' | tr '\n' ' ')"
log "NEEDED: ${needed}"
case " ${needed} " in
    *" libc++_shared.so "* | *" libOpenCL.so "*) die "unexpected NEEDED entry in ${needed}" ;;
esac
if "${READELF}" -lW "${out}/_mnncengine.so" | awk '$1 == "LOAD" {print $NF}' | grep -qv '^0x4000$'; then
    die "a LOAD segment of _mnncengine.so is not 16 KB aligned"
fi

wheel="$(assemble_wheel "${out}/_mnncengine.so" "${PLATFORM_TAG}")"
log "done in $((SECONDS - start)) s: ${wheel}"
echo "${wheel}"
