#!/usr/bin/env bash
# Installs the Debian 12 packages Transformer Studio builds, runs and tests with. Idempotent: skips apt when all
# are present. Uses sudo only when not root and sudo exists.
#   bash .ci/deps.sh            build, run and test
#   bash .ci/deps.sh --corpus   also WordNet and OpenCC for `transformer-studio corpus build` (it fetches the .debs itself)
#   bash .ci/deps.sh --fuzz     also clang and its libFuzzer runtime for the `fuzz` preset (.ci/fuzz.sh)
#   bash .ci/deps.sh --format   also clang-format for the style check of changed lines (.ci/check_format.sh)
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config ccache
      libeigen3-dev nlohmann-json3-dev libpcre2-dev zlib1g-dev libsentencepiece-dev libicu-dev
      libimgui-dev libglfw3-dev libstb-dev libegl-dev libgl-dev libgles-dev libgl1-mesa-dri
      xvfb xauth xdotool x11-xserver-utils fonts-dejavu-core fonts-wqy-microhei fonts-symbola
      libgtest-dev libgmock-dev libbenchmark-dev librsvg2-bin libxml2-utils gettext dpkg-dev desktop-file-utils
      git python3 python3-numpy python3-yaml)  # git, numpy, yaml: llama.cpp's gguf-py at test set-up
if [ "${1:-}" = "--corpus" ]; then pkgs+=(wordnet-base opencc); fi
if [ "${1:-}" = "--fuzz" ]; then pkgs+=(clang libclang-rt-14-dev); fi
if [ "${1:-}" = "--format" ]; then pkgs+=(clang-format-14); fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then SUDO=sudo; fi
  echo "Installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
