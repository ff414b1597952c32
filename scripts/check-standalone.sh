#!/usr/bin/env bash
# The project carries every file its tests read: clones this checkout's HEAD into an empty
# temporary folder (nothing beside the clone, so a read of any neighbour fails) and runs the
# native KAT suite there:
#   1. no tracked file names the read-only folder of vectors beside developers' checkouts;
#   2. the C KAT driver (`make -C libs/native/test/c check`: decompresses and checks the vectors
#      against SHA256SUMS, then every vector on every path), which needs no node_modules;
#   3. the jest KAT suite against an addon built in the clone, with this checkout's node_modules
#      linked in (dependencies only, no second `npm ci`).
# Usage: bash scripts/check-standalone.sh   (exits non-zero on any failure)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
clone=$tmp/hashq
log() { printf '\n== standalone: %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }

log "clone $(git -C "$repo" rev-parse --short HEAD) into $clone"
git clone --quiet --no-hardlinks "$repo" "$clone"
git -C "$clone" checkout --quiet --detach "$(git -C "$repo" rev-parse HEAD)"
[ "$(ls -A "$tmp")" = hashq ] || { echo "the clone's folder is not alone" >&2; exit 1; }

log "no reference to the folder beside the checkout"
if git -C "$clone" grep -n -E '\.\./shared|shared/(kat|seeds)'; then
  echo "these files read beside the checkout: the project must carry what it reads" >&2
  exit 1
fi

log "C KAT driver"
make -s -C "$clone/libs/native/test/c" check | tail -1

log "jest KAT suite (addon built in the clone)"
[ -d "$repo/node_modules" ] || { echo "run npm ci first (node_modules are linked, not installed)" >&2; exit 1; }
ln -s "$repo/node_modules" "$clone/node_modules"
[ ! -d "$repo/libs/native/node_modules" ] || ln -s "$repo/libs/native/node_modules" "$clone/libs/native/node_modules"
cd "$clone/libs/native"
npm run --silent build >/dev/null
npx jest --silent test/kat.test.ts
log "passed"
