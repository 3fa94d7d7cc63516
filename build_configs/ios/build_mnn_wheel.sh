#!/usr/bin/env bash
# Cross-build MNN 3.6.1's Python binding for iOS as the wheels
#   mnn-3.6.1+keyframe1-cp312-cp312-ios_13_0_arm64_iphoneos.whl
#   mnn-3.6.1+keyframe1-cp312-cp312-ios_13_0_arm64_iphonesimulator.whl
#   mnn-3.6.1+keyframe1-cp312-cp312-ios_13_0_x86_64_iphonesimulator.whl   (only with IOS_SIM_X86_64=1)
# (PY_VERSION=3.11 -> cp311) that `flet build ipa` installs when PIP_FIND_LINKS points at
# $WHEELHOUSE. serious-python runs pip once per target arch; pyproject.toml's
# [tool.flet.ios] target_arch limits that to iphoneos.arm64 and iphonesimulator.arm64.
#
# Host: macOS with Xcode (command line tools and the iOS SDKs), git, cmake >= 3.18,
# ninja or make, Python 3 with pip. Cannot run on Linux.
#
# Environment (unset: both are found in flet's own python-ios-dart-<full>.tar.gz of the
# python-build release the installed flet-cli pins, downloaded into $WORK_DIR):
#   PYTHON_IOS_INCLUDE_IPHONEOS         folder with Python.h of the iOS CPython ($PY_VERSION) the app
#                                       embeds, device slice (e.g. .../Python.xcframework/ios-arm64/Headers)
#   PYTHON_IOS_INCLUDE_IPHONESIMULATOR  the same for the simulator slice
#                                       (e.g. .../Python.xcframework/ios-arm64_x86_64-simulator/Headers)
# Usage: build_mnn_wheel.sh [WHEELHOUSE]   (default $WHEELHOUSE, see mnn_common.sh)
# Optional: see build_configs/common/mnn_common.sh, and IOS_SIM_X86_64 (default 0).
#
# Steps per target: clone MNN at the tag -> apply build_configs/patches -> static libMNN
# (Metal, no thread pool, LLM + Omni, OpenCV, image codecs; no converter/tools/train)
# -> compile pymnn/src/MNN.cc -> link _mnncengine.so (Python symbols resolved at load
# time from the app's Python framework) -> wheel.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../common/mnn_common.sh
source "${here}/../common/mnn_common.sh"
take_wheelhouse_arg "$@"

[[ "$(uname -s)" == "Darwin" ]] || die "iOS wheels build only on macOS with Xcode"
need xcrun "the Xcode toolchain"
need cmake "configuring MNN"
"${PYTHON}" -m pip --version >/dev/null 2>&1 || die "${PYTHON} has no pip (needed for numpy headers)"
# Python headers of the iOS CPython the app embeds: given, else from flet's own distribution.
if [[ -z "${PYTHON_IOS_INCLUDE_IPHONEOS:-}" || -z "${PYTHON_IOS_INCLUDE_IPHONESIMULATOR:-}" ]]; then
    ios_dist="$(python_build_dist "python-ios-dart-{full}.tar.gz")"
    PYTHON_IOS_INCLUDE_IPHONEOS="${PYTHON_IOS_INCLUDE_IPHONEOS:-$(find_python_include "${ios_dist}" "ios-arm64/")}" \
        || die "no device Python.h in ${ios_dist}; set PYTHON_IOS_INCLUDE_IPHONEOS"
    PYTHON_IOS_INCLUDE_IPHONESIMULATOR="${PYTHON_IOS_INCLUDE_IPHONESIMULATOR:-$(find_python_include "${ios_dist}" "simulator")}" \
        || die "no simulator Python.h in ${ios_dist}; set PYTHON_IOS_INCLUDE_IPHONESIMULATOR"
fi
[[ -f "${PYTHON_IOS_INCLUDE_IPHONEOS}/Python.h" ]] \
    || die "PYTHON_IOS_INCLUDE_IPHONEOS must be the device Python ${PY_VER} headers (folder with Python.h)"
[[ -f "${PYTHON_IOS_INCLUDE_IPHONESIMULATOR}/Python.h" ]] \
    || die "PYTHON_IOS_INCLUDE_IPHONESIMULATOR must be the simulator Python ${PY_VER} headers"

IOS_MIN="13.0"
generator=()
if command -v ninja >/dev/null 2>&1; then
    generator=(-G Ninja)
fi

start=${SECONDS}
mnn_fetch_and_patch
IFS=$'\n' read -r -d '' -a common_flags < <(mnn_common_cmake_flags) || true

build_one() {
    local sdk="$1" arch="$2" plat="$3" py_inc="$4"
    local build="${WORK_DIR}/build-ios-${sdk}-${arch}" sysroot min_flag
    sysroot="$(xcrun --sdk "${sdk}" --show-sdk-path)"
    if [[ "${sdk}" == "iphoneos" ]]; then
        min_flag="-miphoneos-version-min=${IOS_MIN}"
    else
        min_flag="-mios-simulator-version-min=${IOS_MIN}"
    fi

    log "configuring MNN for ${sdk}/${arch}"
    cmake -S "${MNN_SRC}" -B "${build}" ${generator[@]+"${generator[@]}"} \
        "${common_flags[@]}" \
        -DCMAKE_SYSTEM_NAME=iOS \
        -DCMAKE_OSX_SYSROOT="${sdk}" \
        -DCMAKE_OSX_ARCHITECTURES="${arch}" \
        -DCMAKE_OSX_DEPLOYMENT_TARGET="${IOS_MIN}" \
        -DCMAKE_TRY_COMPILE_TARGET_TYPE=STATIC_LIBRARY \
        -DMNN_METAL=ON \
        -DMNN_USE_THREAD_POOL=OFF \
        -DMNN_ARM82="$([[ "${arch}" == arm64 ]] && echo ON || echo OFF)"
    log "building libMNN for ${sdk}/${arch} (${JOBS} jobs)"
    cmake --build "${build}" --parallel "${JOBS}"

    local numpy_inc
    numpy_inc="$(numpy_include_for "${plat}")"
    local -a cflags archives force_load=()
    IFS=$'\n' read -r -d '' -a cflags < <(pymnn_compile_args "${MNN_SRC}" "${build}" "${numpy_inc}") || true
    IFS=$'\n' read -r -d '' -a archives < <(mnn_static_archives "${build}") || true
    [[ ${#archives[@]} -gt 0 ]] || die "no libMNN.a under ${build}"
    local a
    for a in "${archives[@]}"; do
        force_load+=("-Wl,-force_load,${a}")
    done
    log "linking archives: ${archives[*]}"

    local out="${build}/pymnn" cxx
    cxx="$(xcrun --sdk "${sdk}" --find clang++)"
    mkdir -p "${out}"
    "${cxx}" -arch "${arch}" -isysroot "${sysroot}" "${min_flag}" "${cflags[@]}" "-I${py_inc}" \
        -c "${MNN_SRC}/pymnn/src/MNN.cc" -o "${out}/MNN.o"
    "${cxx}" -arch "${arch}" -isysroot "${sysroot}" "${min_flag}" -dynamiclib \
        -o "${out}/_mnncengine.so" "${out}/MNN.o" "${force_load[@]}" \
        -undefined dynamic_lookup \
        -framework Foundation -framework Metal -framework CoreGraphics -framework CoreFoundation \
        -framework Accelerate -lc++ -lobjc \
        -install_name "@rpath/_mnncengine.so" -Wl,-dead_strip -Wl,-x
    # Checks: the right platform and architecture, and no dylib outside the system.
    xcrun vtool -show-build "${out}/_mnncengine.so" >&2 || true
    if xcrun otool -L "${out}/_mnncengine.so" | tail -n +2 | awk '{print $1}' \
        | grep -Ev '^(/usr/lib/|/System/Library/|@rpath/_mnncengine\.so$)'; then
        die "_mnncengine.so for ${sdk}/${arch} links a library the app does not ship"
    fi
    assemble_wheel "${out}/_mnncengine.so" "${plat}"
}

build_one iphoneos arm64 ios_13_0_arm64_iphoneos "${PYTHON_IOS_INCLUDE_IPHONEOS}"
build_one iphonesimulator arm64 ios_13_0_arm64_iphonesimulator "${PYTHON_IOS_INCLUDE_IPHONESIMULATOR}"
if [[ "${IOS_SIM_X86_64:-0}" == "1" ]]; then
    build_one iphonesimulator x86_64 ios_13_0_x86_64_iphonesimulator "${PYTHON_IOS_INCLUDE_IPHONESIMULATOR}"
fi
log "done in $((SECONDS - start)) s; wheels in ${WHEELHOUSE}"
