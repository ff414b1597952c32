#!/usr/bin/env bash
# npm run test:riscv64 — the native library on riscv64 (rv64gc, under qemu):
#   1. installs what it needs (Debian packages if missing, the riscv64 Node root)
#   2. cross-builds the addon as prebuilds (linux-riscv64, linux-x64)
#   3. C KAT driver: every vector of every file, riscv64 under qemu
#      (-cpu sifive-u54: rv64gc, no bit-manipulation; and -cpu rv64 with Zbb
#      and Zknh: every path, zknh, zbb, rv64gc, portable), and x86-64 with
#      the riscv64 Xoodoo layout forced (-DHQ_XOODOO_PAIRS=1)
#   4. real riscv64 Node.js under qemu loads the riscv64 prebuild: every KAT
#      vector one-shot through the JS API (every 4th also serialize/restore),
#      resumability properties
#   5. cross-architecture states both ways (x86-64 ⇄ riscv64), and between
#      the rv64gc and the Zbb/Zknh paths
#   The Zbb/Zknh CPU reruns only what its paths change: the KATs of the
#   algorithms dispatched to zbb or zknh, and the states.
#   6. node-gyp-build's install check on riscv64 finds the prebuild
# HASHQ_TEST_ARM64=1 adds arm64 (Debian trixie's arm64 nodejs under
# qemu-aarch64, the linux-arm64 prebuild: KATs, properties, both state
# files); off by default to keep the run short.
# Ends with "N passed, M failed"; exits non-zero on any failure.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
native=$here/libs/native
runner=$native/test/riscv64/runner.js
root=${HASHQ_RISCV64_ROOT:-$here/.data/riscv64/root}
vectors=$native/test/vectors     # gzipped, read by the JS runner
kat=$native/test/c/out/vectors   # decompressed by `make vectors`, for the C driver
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
seed=${HASHQ_SEED:-$(( $(date +%s) % 1000000 ))}
passed=0 failed=0 steps_failed=()
qemu=(qemu-riscv64 -cpu sifive-u54)
qemu_ext=(qemu-riscv64 -cpu rv64,zbb=true,zknh=true)

log() { printf '\n== %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }
die() { echo "test:riscv64: $*" >&2; echo "$passed passed, $((failed + 1)) failed"; exit 1; }
# Runs one step, adds the "N passed, M failed" its last line reports (the C
# driver adds a remark after it); a step that fails without such a line
# counts as one failure.
step() {
  local name=$1; shift
  log "$name"
  "$@" 2>&1 | tee "$tmp/out"
  local rc=${PIPESTATUS[0]}
  local line; line=$(grep -E '^[0-9]+ passed, [0-9]+ failed( |$)' "$tmp/out" | tail -1)
  local f=0
  if [ -n "$line" ]; then
    passed=$((passed + ${line%% passed*}))
    f=${line#*, }; f=${f%% failed*}; failed=$((failed + f))
  fi
  if [ "$rc" -ne 0 ]; then
    [ -n "$line" ] && [ "$f" -ne 0 ] || failed=$((failed + 1))
    steps_failed+=("$name")
  fi
}

log "prerequisites"
need=()
command -v qemu-riscv64 >/dev/null || need+=(qemu-user)
command -v riscv64-linux-gnu-gcc >/dev/null || need+=(gcc-riscv64-linux-gnu)
command -v riscv64-linux-gnu-g++ >/dev/null || need+=(g++-riscv64-linux-gnu)
[ -r /usr/share/keyrings/debian-archive-keyring.gpg ] || need+=(debian-archive-keyring)
command -v make >/dev/null || need+=(make)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]}"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; } \
    || die "apt-get install ${need[*]} failed"
fi
bash "$here/scripts/riscv64/rootfs.sh" "$root" || die "riscv64 root"

log "build: TypeScript, KAT parser, prebuilds (riscv64, x64)"
(cd "$native" && npx tsc -p . && npx tsc -p test/riscv64) || die "tsc"
bash "$here/scripts/riscv64/prebuild.sh" riscv64 || die "riscv64 prebuild"
bash "$here/scripts/riscv64/prebuild.sh" x64 || die "x64 prebuild"
make -s -C "$native/test/c" vectors || die "test vectors"
make -s -C "$native/test/c" CC=riscv64-linux-gnu-gcc OUT=out/riscv64 || die "C driver (riscv64)"
make -s -C "$native/test/c" OUT=out/xoodoo-pairs CFLAGS="-O2 -DHQ_XOODOO_PAIRS=1" || die "C driver (pairs)"

# node-gyp-build must load the prebuilds, never build/Release (x86-64 only).
export PREBUILDS_ONLY=1
rnode() { "${qemu[@]}" -L "$root" "$root/usr/bin/node" "$@"; }
rnode_ext() { "${qemu_ext[@]}" -L "$root" "$root/usr/bin/node" "$@"; }

# What `npm install` runs on a riscv64 host (node-gyp-build's install check),
# in a copy of the package that has only package.json and the prebuild:
# exit 0 means the prebuild loads and nothing would be compiled.
install_check() {
  local pkg=$tmp/installed
  local check; check=$(cd "$native" && node -p "require.resolve('node-gyp-build/build-test.js')")
  mkdir -p "$pkg/prebuilds" && cp "$native/package.json" "$pkg/" && cp -r "$native/prebuilds/linux-riscv64" "$pkg/prebuilds/"
  (cd "$pkg" && env -u PREBUILDS_ONLY "${qemu[@]}" -L "$root" "$root/usr/bin/node" "$check") \
    && echo "1 passed, 0 failed"
}

step "riscv64 Node: node-gyp-build loads the prebuild (npm install would not compile)" install_check
step "C driver, riscv64 (qemu -cpu sifive-u54), all KATs" "${qemu[@]}" -L /usr/riscv64-linux-gnu "$native/test/c/out/riscv64/kat" "$kat"
step "C driver, riscv64 (qemu -cpu rv64,zbb=true,zknh=true), all KATs on every path" \
  "${qemu_ext[@]}" -L /usr/riscv64-linux-gnu "$native/test/c/out/riscv64/kat" "$kat"
step "C driver, x86-64 with HQ_XOODOO_PAIRS=1, all KATs" "$native/test/c/out/xoodoo-pairs/kat" "$kat"
step "riscv64 Node: KATs through the JS API" rnode "$runner" kat "$vectors" 4
step "riscv64 Node, Zbb+Zknh: KATs through the JS API (algorithms on the zbb and zknh paths)" \
  rnode_ext "$runner" kat "$vectors" 4 zbb,zknh
step "riscv64 Node: resumability properties (seed $seed)" rnode "$runner" props "$seed" 3
step "x86-64 Node: write cross-architecture states" node "$runner" write-states "$tmp/x64.json" "$seed"
step "riscv64 Node: finish the x86-64 states" rnode "$runner" check-states "$tmp/x64.json"
step "riscv64 Node: write cross-architecture states" rnode "$runner" write-states "$tmp/riscv64.json" "$((seed + 1))"
step "x86-64 Node: finish the riscv64 states" node "$runner" check-states "$tmp/riscv64.json"
step "x86-64 Node, portable path: finish the riscv64 states" env HASHQ_NATIVE_IMPL=portable node "$runner" check-states "$tmp/riscv64.json"
# SHA-2 writes on its zbb path (zknh hidden) and finishes on zknh, the rest on zbb.
step "riscv64 Node, Zbb+Zknh: finish the x86-64 states" rnode_ext "$runner" check-states "$tmp/x64.json"
step "riscv64 Node, Zbb+Zknh: finish the rv64gc states" rnode_ext "$runner" check-states "$tmp/riscv64.json"
step "riscv64 Node, Zbb (zknh hidden): write states" \
  env HASHQ_NATIVE_DISABLE=zknh "${qemu_ext[@]}" -L "$root" "$root/usr/bin/node" \
  "$runner" write-states "$tmp/zbb.json" "$((seed + 2))"
step "x86-64 Node: finish the riscv64 Zbb states" node "$runner" check-states "$tmp/zbb.json"
step "riscv64 Node, rv64gc: finish the Zbb states" rnode "$runner" check-states "$tmp/zbb.json"

if [ "${HASHQ_TEST_ARM64:-0}" = 1 ]; then
  aroot=$here/.data/arm64/root
  DEB_ARCH=arm64 bash "$here/scripts/riscv64/rootfs.sh" "$aroot" || die "arm64 root"
  bash "$here/scripts/riscv64/prebuild.sh" arm64 || die "arm64 prebuild"
  anode() { qemu-aarch64 -L "$aroot" "$aroot/usr/bin/node" "$@"; }
  step "arm64 Node: KATs through the JS API" anode "$runner" kat "$vectors" 4
  step "arm64 Node: resumability properties (seed $seed)" anode "$runner" props "$seed" 3
  step "arm64 Node: finish the x86-64 states" anode "$runner" check-states "$tmp/x64.json"
  step "arm64 Node: finish the riscv64 states" anode "$runner" check-states "$tmp/riscv64.json"
fi

log "summary"
[ ${#steps_failed[@]} -eq 0 ] || printf 'failed step: %s\n' "${steps_failed[@]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ ${#steps_failed[@]} -eq 0 ]
