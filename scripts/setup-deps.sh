#!/usr/bin/env bash
# setup-deps.sh: installs the Debian 12 packages Gradscope needs to build and run its tests,
# examples and benchmarks. Quiet and quick when everything is already there: it asks dpkg
# first and runs apt-get (update + install) only for what is missing. Needs root (or sudo)
# only when something must be installed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# The engine needs a C11 compiler, meson + ninja, OpenBLAS, libdw (call sites' lines) and the
# DLPack header; the tests need GLib. The inspector needs GTK 4, libadwaita and Graphviz; its
# translations gettext; its desktop files their validators; its widget tests an X server (Xvfb)
# and fonts, a CJK one for zh_CN. The sanitizer build needs nothing more with gcc (libasan and
# libubsan come with it). The Python module needs CPython's and NumPy's headers, its tests
# pytest and PyTorch (zero copy and gradients are checked against it). examples/word-language
# reads Debian's word lists (/usr/share/dict). The manual pages' test renders them with groff.
# Data-parallel training (engine/distributed) runs over Open MPI: its headers and mpirun (the
# tests run two ranks under it; one runs them in two network namespaces, made with iproute2).
packages=(build-essential pkg-config meson ninja-build libglib2.0-dev libopenblas-dev libdw-dev
  libdlpack-dev libgtk-4-dev libadwaita-1-dev libgraphviz-dev graphviz gettext desktop-file-utils
  appstream xvfb xauth fonts-dejavu-core fonts-noto-cjk python3-dev python3-numpy python3-pytest
  python3-torch wamerican wngerman wfrench wspanish witalian groff-base libopenmpi-dev
  openmpi-bin iproute2)

if ! command -v dpkg-query >/dev/null 2>&1; then
  gs_say "not a Debian system: make sure these (or their equivalents) are installed: ${packages[*]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 ||
    gs_die "missing packages (${missing[*]}) and not root; run as root or install them"
  sudo=(sudo)
fi

gs_say "installing ${missing[*]}"
apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -qq -o Dpkg::Use-Pty=0)
"${apt[@]}" update
"${apt[@]}" install -y --no-install-recommends "${missing[@]}" </dev/null
