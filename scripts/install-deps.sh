#!/usr/bin/env bash
# Idempotent dependency installer for Trellis on Debian 12 (bookworm).
# Fast no-op when everything is already present.
set -euo pipefail

DEBIAN_PKGS=(
  build-essential cmake ninja-build ccache pkg-config git
  libonnx-dev libprotobuf-dev protobuf-compiler
  libgtest-dev libgmock-dev
  libdnnl-dev libxnnpack-dev libpthreadpool-dev
  libonnx-testdata
  python3-numpy python3-onnx python3-torch python3-torchvision
  clang-14 libclang-rt-14-dev   # the fuzz targets (make fuzz, make fuzz-ci): clang with libFuzzer
)
# PyPI tools for the `python3` on PATH (not necessarily Debian's /usr/bin/python3).
NUMPY_VERSION=1.26.4
ORT_VERSION=1.30.0

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
echo "deps: done"
