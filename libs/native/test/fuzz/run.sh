#!/usr/bin/env bash
# Fuzz the state decoder with libFuzzer (clang, ASan, UBSan) for a bounded
# time. Seeds: the golden states. Usage: run.sh [seconds] (default 300).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
secs=${1:-300}
out=$here/out
command -v clang >/dev/null || { echo "needs clang (apt-get install clang)"; exit 1; }
mkdir -p "$out/corpus"
clang -g -O1 -std=c11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -I"$here/../../src" "$here"/../../src/*.c "$here/state_fuzz.c" -o "$out/state_fuzz"
node -e '
  const fs = require("fs"), path = require("path");
  const golden = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
  for (const g of golden.states ?? golden)
    fs.writeFileSync(path.join(process.argv[2], g.algorithm + ".bin"), Buffer.from(g.state ?? g.stateHex, "hex"));
' "$here/../fixtures/golden-v1.json" "$out/corpus"
# a resumable-hash 0.2.5 SHA-1 state (the example of issue 2)
echo 67452301efcdab8998badcfe10325476c3d2e1f0000001f80000000062e664460dca9f8bfeb17084a24e3f396076a677d12a302552738d9d6b44a12fd9a68fdeb8ad5eb3b46f105ef757a78c976b69792abeeb19a8a1f0e3005ab0600000003f | xxd -r -p > "$out/corpus/legacy-sha1.bin"
cd "$out"
./state_fuzz -max_total_time="$secs" -print_final_stats=1 corpus/
