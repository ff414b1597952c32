#!/usr/bin/env bash
# Build @hashq/native as an N-API prebuild for linux-<arch> (x64, riscv64,
# arm64) with prebuildify, so that node-gyp-build loads it without compiling.
# Cross builds use Debian's cross compilers and this machine's Node headers
# (--nodedir=/usr). The build runs in a staging copy of the package, so the
# package's own build/ (the x86-64 addon the jest tests load) is never
# touched; the result lands in libs/native/prebuilds/linux-<arch>/.
# Usage: prebuild.sh <x64|riscv64|arm64>
set -euo pipefail
arch=${1:?usage: prebuild.sh <x64|riscv64|arm64>}
here=$(cd "$(dirname "$0")/../.." && pwd)
pkg=$here/libs/native
stage=$here/.data/prebuild/$arch

case $arch in
  x64) triple="" ;;
  riscv64) triple=riscv64-linux-gnu ;;
  arm64) triple=aarch64-linux-gnu ;;
  *) echo "unknown arch $arch"; exit 2 ;;
esac
if [ -n "$triple" ]; then
  need=()
  command -v "$triple-gcc" >/dev/null || need+=("gcc-$triple")
  command -v "$triple-g++" >/dev/null || need+=("g++-$triple")
  if [ ${#need[@]} -gt 0 ]; then
    echo "installing ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
  export CC=$triple-gcc CXX=$triple-g++ LINK=$triple-g++ AR=$triple-ar STRIP=$triple-strip
  export CC_host=gcc CXX_host=g++ LINK_host=g++
fi

rm -rf "$stage" && mkdir -p "$stage"
cp -r "$pkg/binding.gyp" "$pkg/package.json" "$pkg/src" "$pkg/binding" "$stage/"
# node-addon-api's include_dir is resolved from the staging folder.
addon_api=$(cd "$pkg" && node -p "path.dirname(require.resolve('node-addon-api/package.json'))")
mkdir -p "$stage/node_modules" && ln -s "$addon_api" "$stage/node_modules/node-addon-api"

# prebuildify runs "$PREBUILD_NODE_GYP rebuild --arch=<arch> ..."; the wrapper
# adds --nodedir=/usr (headers of this machine's Node; no download).
npm_gyp=$(dirname "$(command -v npm)")/../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js
[ -f "$npm_gyp" ] || npm_gyp=$(npm prefix -g)/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js
wrapper=$stage/node-gyp
printf '#!/bin/sh\nexec node %q "$@" --nodedir=/usr\n' "$npm_gyp" > "$wrapper" && chmod +x "$wrapper"

rm -rf "$pkg/prebuilds/linux-$arch"
PREBUILD_NODE_GYP=$wrapper PREBUILD_STRIP_BIN=${STRIP:-strip} \
  node "$here/node_modules/prebuildify/bin.js" --napi --strip --platform linux --arch "$arch" \
  --cwd "$stage" --out "$pkg" --quiet
ls -l "$pkg/prebuilds/linux-$arch"
file "$pkg"/prebuilds/linux-$arch/*.node 2>/dev/null || true
