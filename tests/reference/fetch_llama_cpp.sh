#!/usr/bin/env bash
# llama.cpp's source and prebuilt libraries, offline from npm (node-llama-cpp ships both), into DEST:
#   DEST/src   the llama.cpp source matching the libraries (a git bundle inside node-llama-cpp), with gguf-py
#   DEST/lib   libllama.v0.4.0.so, libggml*.so (Linux x86-64 CPU builds) from @node-llama-cpp/linux-x64
# Used by tests/reference/make_gguf_fixtures.py (gguf-py). Prints a notice and exits 1 when npm is unreachable.
set -euo pipefail
dest=${1:?usage: fetch_llama_cpp.sh DEST}
version=3.21.1
mkdir -p "$dest"
if [ -d "$dest/src/gguf-py" ] && [ -d "$dest/lib" ]; then echo "llama.cpp already in $dest"; exit 0; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! (cd "$tmp" && timeout 600 npm pack --silent "node-llama-cpp@$version" "@node-llama-cpp/linux-x64@$version" >/dev/null); then
  echo "npm pack node-llama-cpp@$version failed: llama.cpp is not available" >&2; exit 1
fi
mkdir -p "$tmp/a" "$tmp/b"
tar -xzf "$tmp/node-llama-cpp-$version.tgz" -C "$tmp/a"
tar -xzf "$tmp/node-llama-cpp-linux-x64-$version.tgz" -C "$tmp/b"
rm -rf "$dest/src" "$dest/lib"
git clone -q "$tmp/a/package/llama/gitRelease.bundle" "$dest/src" 2>/dev/null
mkdir -p "$dest/lib" && cp "$tmp"/b/package/bins/linux-x64/*.so "$dest/lib/"
echo "llama.cpp source in $dest/src, libraries in $dest/lib"
