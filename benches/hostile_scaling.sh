#!/usr/bin/env bash
# Converting schema errors is linear in their number: instructions to
# validate an invoice whose every amount is mistyped (one structure violation
# per item), at N and 4N items. A linear conversion gives a ratio near 4; a
# conversion that compares each error with every other gives near 16.
# Usage: benches/hostile_scaling.sh [N]   (needs valgrind; N defaults to 5000)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-5000}
cargo bench --bench instructions --no-run 2>/dev/null
bin=$(ls -t "${CARGO_TARGET_DIR:-target}"/release/deps/instructions-* | grep -v '\.d$' | head -1)
count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$@" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'; }
printf '%8s %16s\n' items validate
prev=""
for items in "$n" $((4 * n)); do
  base=$(count build "$items" mistyped)
  va=$(( $(count validate "$items" mistyped) - base ))
  printf '%8s %16s\n' "$items" "$va"
  [ -n "$prev" ] && printf 'ratio (4x items): %s\n' "$(echo "scale=2; $va / $prev" | bc)"
  prev=$va
done
