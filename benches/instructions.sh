#!/usr/bin/env bash
# (b)/(a) in instructions: validate against deserialize, under callgrind.
# Usage: benches/instructions.sh   (needs valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench --bench instructions --no-run 2>/dev/null
bin=$(ls -t "${CARGO_TARGET_DIR:-target}"/release/deps/instructions-* | grep -v '\.d$' | head -1)
count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$@" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'; }
printf '%-8s %8s %16s %16s %8s\n' case items deserialize validate ratio
for case in valid failing; do
  for items in 1000 100000; do
    base=$(count build "$items" "$case")
    de=$(( $(count deserialize "$items" "$case") - base ))
    va=$(( $(count validate "$items" "$case") - base ))
    printf '%-8s %8s %16s %16s %8s\n' "$case" "$items" "$de" "$va" "$(echo "scale=3; $va / $de" | bc)"
  done
done
