#!/usr/bin/env bash
# The streaming reader against serde_json::from_slice, in instructions,
# under callgrind. Usage: benches/stream_reader.sh   (needs valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench --bench stream_reader --no-run 2>/dev/null
bin=$(ls -t "${CARGO_TARGET_DIR:-target}"/release/deps/stream_reader-* | grep -v '\.d$' | head -1)
count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$@" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'; }
printf '%6s %8s %14s %14s %8s %14s %8s\n' items bytes serde reader ratio reader-shown ratio
for items in 30 300; do
  bytes=$("$bin" build "$items")
  base=$(count build "$items")
  serde=$(( $(count serde "$items") - base ))
  reader=$(( $(count reader "$items") - base ))
  shown=$(( $(count reader-shown "$items") - base ))
  printf '%6s %8s %14s %14s %8s %14s %8s\n' "$items" "$bytes" "$serde" "$reader" \
    "$(echo "scale=2; $reader / $serde" | bc)" "$shown" "$(echo "scale=2; $shown / $serde" | bc)"
done
