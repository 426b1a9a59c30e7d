#!/bin/sh
# Installs the Debian packages EasyNPU needs to build and test, only those
# missing. As root it runs apt-get; otherwise it prints the exact command.
set -eu
PKGS="cmake make gcc g++ pkg-config protobuf-c-compiler libprotobuf-c-dev libonnx-dev libonnx-testdata libcmocka-dev libjansson-dev zlib1g-dev libgemmlowp-dev openmpi-bin libopenmpi-dev librsvg2-bin"
# the audio front end (docs/audio.md): FFTW, libsamplerate; espeak-ng and sox make its test speech
PKGS="$PKGS libfftw3-dev libsamplerate0-dev espeak-ng sox"
for opt in "$@"; do
  case "$opt" in
    --fuzz) PKGS="$PKGS clang libfuzzer-14-dev libclang-rt-14-dev" ;;
    --clang) PKGS="$PKGS clang" ;;
    --valgrind) PKGS="$PKGS valgrind" ;;
    --rtl) PKGS="$PKGS verilator yosys python3" ;;
  esac
done
missing=""
for p in $PKGS; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
  echo "deps: installing$missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends $missing >/dev/null 2>&1 || {
    apt-get update >/dev/null 2>&1
    apt-get install -y --no-install-recommends $missing
  }
else
  echo "deps: missing packages:$missing" >&2
  echo "deps: run: sudo apt-get install -y$missing" >&2
  exit 1
fi
