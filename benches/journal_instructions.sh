#!/usr/bin/env bash
# The journal's cost in instructions per document: one Bulk run of 10,000
# documents at zero latency and concurrency 16, with and without a journal,
# under callgrind (instruction counts repeat where wall clock does not; the
# kernel's share, the page cache, is not counted: see `cargo bench --bench bulk`).
# Usage: benches/journal_instructions.sh   (needs valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench --bench bulk --no-run 2>/dev/null
bin=$(ls -t "${CARGO_TARGET_DIR:-target}"/release/deps/bulk-* | grep -v '\.d$' | head -1)
count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" once "$1" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'; }
without=$(count without)
with=$(count with)
echo "instructions per document: without a journal $((without / 10000)), with $((with / 10000)); the journal's cost $(( (with - without) / 10000 )) ($(echo "scale=1; 100 * ($with - $without) / $without" | bc)%)"
