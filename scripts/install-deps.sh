#!/usr/bin/env bash
# Idempotent dependency installer for Trellis on Debian 12 (bookworm).
# Fast no-op when everything is already present.
set -euo pipefail

DEBIAN_PKGS=(
  build-essential cmake ninja-build ccache pkg-config git
  libonnx-dev libprotobuf-dev protobuf-compiler
  libgtest-dev libgmock-dev
  libdnnl-dev libxnnpack-dev libpthreadpool-dev
  libomp-14-dev
  libonnx-testdata
  python3-numpy python3-onnx python3-torch python3-torchvision python3-pip python3-venv
  python3-dev python3-pytest   # the Python package: its extension's headers, its tests
  clang-14 libclang-rt-14-dev   # the fuzz targets (make fuzz, make fuzz-ci): clang with libFuzzer
)
# PyPI tools for the `python3` on PATH (not necessarily Debian's /usr/bin/python3).
NUMPY_VERSION=1.26.4
ORT_VERSION=1.30.0
# onnxruntime's quantization tool (the int8 test models) imports onnx and ml_dtypes.
ONNX_VERSION=1.17.0
ML_DTYPES_VERSION=0.5.1

SUDO=()
if [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
fi

# --- Debian packages -------------------------------------------------------
missing=()
for p in "${DEBIAN_PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  echo "deps: all Debian packages present"
else
  echo "deps: installing Debian packages: ${missing[*]}"
  "${SUDO[@]}" apt-get update
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
fi

# --- transformers for Debian's python3 (the transformer test models) --------
# Pinned: 4.40.2 is the newest that works with Debian's torch 1.13; its companions pinned with it.
# Debian marks its python "externally managed", hence --break-system-packages (installs into
# /usr/local/lib/python3.11/dist-packages, beside Debian's own packages, none replaced).
DEB_PY=/usr/bin/python3
TRANSFORMERS_PKGS=(transformers==4.40.2 tokenizers==0.19.1 huggingface_hub==0.23.4 safetensors==0.4.3)
if "$DEB_PY" -c "import transformers, sys; sys.exit(0 if transformers.__version__ == '4.40.2' else 1)" >/dev/null 2>&1; then
  echo "deps: transformers==4.40.2 present for $DEB_PY"
else
  echo "deps: installing ${TRANSFORMERS_PKGS[*]} for $DEB_PY"
  "$DEB_PY" -m pip install --disable-pip-version-check --root-user-action=ignore -q --break-system-packages \
    "${TRANSFORMERS_PKGS[@]}"
fi

# --- The current ONNX release's node test cases -----------------------------
# Debian's python3-onnx (1.12) stays for everything else; the pinned PyPI onnx, with the numpy,
# ml_dtypes and protobuf it needs and the onnxruntime that is measured on the same cases, lives in
# its own venv (tests/CMakeLists.txt: TRELLIS_ONNX_VENV_PYTHON). Its generators write the cases at
# test time (tests/conformance/gen_onnx_node_cases.py).
ONNX_CASES_VENV="${HOME}/.cache/trellis/onnx-1.23.1-venv"
ONNX_CASES_PKGS=(onnx==1.23.1 numpy==1.26.4 ml_dtypes==0.5.4 protobuf==7.36.2 typing_extensions==4.16.0
                 onnxruntime==1.30.0 flatbuffers==25.12.19 packaging==26.3)
if "$ONNX_CASES_VENV/bin/python" -c "import onnx, onnxruntime, ml_dtypes, sys
sys.exit(0 if (onnx.__version__, onnxruntime.__version__) == ('1.23.1', '1.30.0') else 1)" >/dev/null 2>&1; then
  echo "deps: onnx==1.23.1 and onnxruntime==1.30.0 present in $ONNX_CASES_VENV"
else
  echo "deps: installing ${ONNX_CASES_PKGS[*]} into $ONNX_CASES_VENV"
  mkdir -p "$(dirname "$ONNX_CASES_VENV")"
  "$DEB_PY" -m venv "$ONNX_CASES_VENV"
  "$ONNX_CASES_VENV/bin/python" -m pip install --disable-pip-version-check -q "${ONNX_CASES_PKGS[@]}"
fi

# --- The Python package's venv (.venv at the repository root) ----------------
# Debian's python3 with its numpy, onnx and torch (--system-site-packages), plus the pinned build
# tools of the trellis package (nanobind, scikit-build-core, build) and the onnxruntime its tests
# compare with. CMake builds the extension for this python when it exists (python/CMakeLists.txt:
# TRELLIS_PACKAGE_PYTHON); `make python` installs the package into it offline. Every dependency is
# listed and pinned, so pip resolves nothing (--no-deps).
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PACKAGE_VENV="$REPO_ROOT/.venv"
PACKAGE_VENV_PKGS=(nanobind==2.9.2 scikit-build-core==0.11.6 pathspec==1.1.1 packaging==26.3
                   build==1.2.2.post1 pyproject_hooks==1.3.3
                   onnxruntime==1.30.0 flatbuffers==25.12.19 protobuf==6.33.6)
if "$PACKAGE_VENV/bin/python" -c "import nanobind, scikit_build_core, build, onnxruntime, sys
sys.exit(0 if (nanobind.__version__, scikit_build_core.__version__, onnxruntime.__version__) == ('2.9.2', '0.11.6', '1.30.0') else 1)" >/dev/null 2>&1; then
  echo "deps: nanobind==2.9.2, scikit-build-core==0.11.6 and onnxruntime==1.30.0 present in $PACKAGE_VENV"
else
  echo "deps: installing ${PACKAGE_VENV_PKGS[*]} into $PACKAGE_VENV"
  "$DEB_PY" -m venv --system-site-packages "$PACKAGE_VENV"
  "$PACKAGE_VENV/bin/python" -m pip install --disable-pip-version-check -q --no-deps "${PACKAGE_VENV_PKGS[@]}"
fi

# --- The serving packages in .venv (trellis.serving and its tests) -------------------------
# KServe's model server and Triton's client (tests, bench/serving) have a closure of about 70
# packages. Unlike the list above they are not installed with --no-deps from a hand-kept list: a
# package missing from such a list only shows as an ImportError at run time. Instead pip resolves
# the pinned top-level versions under a constraints file that pins the whole closure
# (scripts/serving-constraints.txt): reproducible, and pip checks the set is consistent. The
# constraints hold numpy at 1.26.4 and protobuf at 6.33.6 (the pin above), so Debian's torch and
# onnx (built for numpy 1.x, seen through --system-site-packages) keep working.
# requests is installed too: Debian's (seen through --system-site-packages) warns on import with
# the newer urllib3 these packages need.
SERVING_PKGS=(kserve==0.21.0 "tritonclient[http,grpc]==2.73.0" requests==2.34.2)
if "$PACKAGE_VENV/bin/python" -c "import importlib.metadata as m, sys
sys.exit(0 if (m.version('kserve'), m.version('tritonclient'), m.version('requests')) == ('0.21.0', '2.73.0', '2.34.2') else 1)" >/dev/null 2>&1; then
  echo "deps: kserve==0.21.0 and tritonclient==2.73.0 present in $PACKAGE_VENV"
else
  echo "deps: installing ${SERVING_PKGS[*]} into $PACKAGE_VENV (constraints: scripts/serving-constraints.txt)"
  "$PACKAGE_VENV/bin/python" -m pip install --disable-pip-version-check -q \
    -c "$REPO_ROOT/scripts/serving-constraints.txt" "${SERVING_PKGS[@]}"
  "$PACKAGE_VENV/bin/python" -c "import onnx, numpy, kserve, tritonclient.http" \
    || { echo "deps: ERROR: after installing the serving packages, .venv cannot import onnx, numpy, kserve" >&2; exit 1; }
fi

# --- Arm NN's own samples (the Arm NN compatibility layer's acceptance test) ---------------------
# tests/install builds Arm NN's samples/SimpleSample.cpp, unchanged, against the installed Trellis.
# The file comes from Debian's source package of Arm NN (armnn 20.08-12, MIT), fetched by apt-get
# from the same archive as the packages above, with a private source list (the system's apt
# configuration is not changed), hash-checked by apt against the signed archive index; only
# samples/ is kept, in $ARMNN_SAMPLES_DIR (CMake's TRELLIS_ARMNN_SAMPLES_DIR). Nothing of it is
# committed to this repository.
ARMNN_SRC_VERSION=20.08-12
ARMNN_SAMPLES_DIR=${TRELLIS_DEPS_DIR:-/opt/trellis-deps}/armnn-$ARMNN_SRC_VERSION/samples
if [[ -f "$ARMNN_SAMPLES_DIR/SimpleSample.cpp" ]]; then
  echo "deps: Arm NN $ARMNN_SRC_VERSION samples present in $ARMNN_SAMPLES_DIR"
else
  echo "deps: fetching Debian's Arm NN $ARMNN_SRC_VERSION source package for its samples/ into $ARMNN_SAMPLES_DIR"
  tmp=$(mktemp -d)
  chmod 755 "$tmp"
  mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/src"
  echo "deb-src http://deb.debian.org/debian bookworm main" >"$tmp/sources.list"
  APT_PRIVATE=(-o "Dir::Etc::SourceList=$tmp/sources.list" -o "Dir::Etc::SourceParts=$tmp/none"
               -o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache" -o Debug::NoLocking=1
               -o APT::Sandbox::User=root)
  if apt-get "${APT_PRIVATE[@]}" -qq update >/dev/null &&
     (cd "$tmp/src" && apt-get "${APT_PRIVATE[@]}" -qq source --download-only "armnn=$ARMNN_SRC_VERSION" >/dev/null) &&
     tar -xf "$tmp"/src/armnn_*.orig.tar.* -C "$tmp/src" --wildcards '*/samples/*'; then
    "${SUDO[@]}" mkdir -p "$(dirname "$ARMNN_SAMPLES_DIR")"
    "${SUDO[@]}" rm -rf "$ARMNN_SAMPLES_DIR"
    "${SUDO[@]}" cp -r "$tmp"/src/armnn-*/samples "$ARMNN_SAMPLES_DIR"
  else
    echo "deps: WARNING: could not fetch Debian's armnn $ARMNN_SRC_VERSION source package; the install test" \
         "will not build Arm NN's own SimpleSample.cpp"
  fi
  rm -rf "$tmp"
fi

# --- cuDNN frontend headers (GpuAcc), only where the CUDA toolkit is installed ---
# The header-only cuDNN frontend comes from PyPI's nvidia-cudnn-frontend wheel (pinned); only its
# include/ is kept, in $CUDNN_FE_DIR (CMake's TRELLIS_CUDNN_FRONTEND_INCLUDE_DIR). Nothing is
# downloaded at build or test time. Without CUDA (CI) the GpuAcc backend is simply not built.
CUDNN_FE_VERSION=1.32.0
CUDNN_FE_DIR=${TRELLIS_DEPS_DIR:-/opt/trellis-deps}/cudnn-frontend
if [[ -x /usr/local/cuda/bin/nvcc ]] || command -v nvcc >/dev/null 2>&1; then
  if [[ -f "$CUDNN_FE_DIR/include/cudnn_frontend.h" ]] &&
     grep -q "define CUDNN_FRONTEND_MINOR_VERSION $(cut -d. -f2 <<<"$CUDNN_FE_VERSION")\$" \
       "$CUDNN_FE_DIR/include/cudnn_frontend_version.h" 2>/dev/null; then
    echo "deps: cuDNN frontend $CUDNN_FE_VERSION headers present in $CUDNN_FE_DIR"
  elif command -v python3 >/dev/null 2>&1 && command -v unzip >/dev/null 2>&1; then
    echo "deps: fetching the cuDNN frontend $CUDNN_FE_VERSION headers into $CUDNN_FE_DIR"
    tmp=$(mktemp -d)
    # Any one platform wheel: the headers are the same in all of them.
    if python3 -m pip download --disable-pip-version-check -q --no-deps --only-binary=:all: \
         --python-version 3.11 --platform manylinux_2_28_x86_64 \
         "nvidia-cudnn-frontend==$CUDNN_FE_VERSION" -d "$tmp" &&
       unzip -q -o "$tmp"/nvidia_cudnn_frontend-*.whl 'include/*' -d "$tmp/unpacked"; then
      "${SUDO[@]}" mkdir -p "$CUDNN_FE_DIR"
      "${SUDO[@]}" rm -rf "$CUDNN_FE_DIR/include"
      "${SUDO[@]}" cp -r "$tmp/unpacked/include" "$CUDNN_FE_DIR/include"
    else
      echo "deps: WARNING: could not fetch nvidia-cudnn-frontend==$CUDNN_FE_VERSION; GpuAcc will not be built"
    fi
    rm -rf "$tmp"
  else
    echo "deps: WARNING: python3 and unzip are needed to fetch the cuDNN frontend headers; GpuAcc will not be built"
  fi
else
  echo "deps: no CUDA toolkit (nvcc); skipping the cuDNN frontend headers (the GpuAcc backend is not built)"
fi

# --- PyPI tools (optional: onnxruntime is only a second reference) --------
if ! command -v python3 >/dev/null 2>&1; then
  echo "deps: WARNING: no python3 on PATH; skipping numpy/onnxruntime"
  exit 0
fi
PY="$(command -v python3)"
PIP=("$PY" -m pip install --disable-pip-version-check --root-user-action=ignore -q)

if "$PY" -c 'import numpy' >/dev/null 2>&1; then
  echo "deps: numpy present for $PY"
else
  echo "deps: installing numpy==$NUMPY_VERSION for $PY"
  "${PIP[@]}" "numpy==$NUMPY_VERSION" \
    || echo "deps: WARNING: numpy install failed for $PY (continuing)"
fi

if "$PY" -c "import onnxruntime, sys; sys.exit(0 if onnxruntime.__version__=='$ORT_VERSION' else 1)" >/dev/null 2>&1; then
  echo "deps: onnxruntime==$ORT_VERSION present for $PY"
else
  echo "deps: installing onnxruntime==$ORT_VERSION for $PY"
  "${PIP[@]}" "onnxruntime==$ORT_VERSION" \
    || echo "deps: WARNING: onnxruntime install failed (optional reference only; continuing)"
fi
if "$PY" -c "import onnx, ml_dtypes, sys; sys.exit(0 if onnx.__version__=='$ONNX_VERSION' else 1)" >/dev/null 2>&1; then
  echo "deps: onnx==$ONNX_VERSION and ml_dtypes present for $PY"
else
  echo "deps: installing onnx==$ONNX_VERSION and ml_dtypes==$ML_DTYPES_VERSION for $PY (onnxruntime.quantization)"
  "${PIP[@]}" "onnx==$ONNX_VERSION" "ml_dtypes==$ML_DTYPES_VERSION" \
    || echo "deps: WARNING: onnx/ml_dtypes install failed (the int8 tests will skip; continuing)"
fi
echo "deps: done"
