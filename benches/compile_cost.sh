#!/usr/bin/env bash
# Compile cost of #[derive(Extractable)] (point 8 of issue 9, the measurement).
#
# Usage:
#   benches/compile_cost.sh                  # R=5 rounds, N=100 struct pairs
#   R=9 benches/compile_cost.sh              # more rounds
#   MODES=full TIME_PASSES=1 benches/compile_cost.sh
#
# Environment (all optional):
#   R            rounds: builds of each crate per mode (default 5)
#   N            RecordN/ItemN pairs per crate (default 100)
#   MODES        "incr full" (default), or one of them:
#                  incr  touch lib.rs, rebuild with a warm incremental cache:
#                        what every edit-compile cycle of a user's crate pays
#                        (cargo's debug default; macros re-expand, the rest is
#                        mostly reused)
#                  full  touch lib.rs, rebuild without incremental: the whole
#                        crate (expansion, type checking, MIR, codegen, LLVM),
#                        what an edit of the types themselves or a clean build costs
#   JOBS         cargo -j for every build (default 1: the machine is shared; with
#                -j1 rustc gets no extra jobserver tokens, so its codegen runs on
#                one thread and wall time is close to CPU time)
#   IR=0         skip counting the LLVM IR functions and lines of each crate
#   NODES=0      skip counting the incremental dependency graph of each crate
#   TIME_PASSES=1   also print rustc's -Ztime-passes of both crates, per mode
#   INSTRUCTIONS=1  also count instructions of each crate's build, per mode in
#                   MODES, under callgrind: deterministic, slow (minutes)
#   USE=1        each crate also uses every record type once, as an application
#                would: the baseline deserializes it (serde_json::from_value),
#                the extract crate validates it (extract::validate). The walk and
#                the checks are generic (like serde's `deserialize`), so they
#                are compiled where a type is used: USE=1 measures that cost
#                too, not only the cost of defining the types.
#   LOADED=1     the baseline also imports `extract` (and derives nothing of
#                it): what naming the crate costs, apart from the derive
#   CARGO_TARGET_DIR  where everything is built (default target/compile-cost/target)
#
# What it measures: two generated crates in one cargo workspace under
# target/compile-cost/ (never committed), both depending on this repository's
# `extract` by path, plus serde, schemars 1 (preserve_order, as the workspace)
# and serde_json:
#   cost-baseline  N x { RecordN, ItemN } deriving Debug, Serialize, Deserialize,
#                  JsonSchema
#   cost-extract   the same plus Extractable on both, and on RecordN
#                  #[check(sum(itemsN.amount) == totalN, tolerance = 0.01)]
# Dependencies are built once. Each measured build is `touch lib.rs` and
# `cargo rustc -p <crate> --lib` (that is `cargo build -p <crate>` in the debug
# profile; `cargo rustc` only so that incr mode can pass `-C incremental` to
# this one crate), which compiles only the crate itself. A RUSTC_WRAPPER times
# that one rustc process with /usr/bin/time (wall seconds, user+sys CPU seconds,
# peak RSS), so cargo's own start-up and fingerprinting are not in the figure;
# on a busy machine CPU time is the steadier of the two. A build in which cargo
# compiled anything else is repeated. The script prints every time, the
# medians and the ratio extract/baseline, and two deterministic proxies that do
# not suffer from the machine's noise: the expanded code of each crate
# (-Zunpretty=expanded, lines and bytes) and the LLVM IR it hands to LLVM
# (functions and lines), which also counts the generic code a derived impl
# instantiates.
#
# Why alternate: the machine is shared and its speed drifts (other builds,
# thermal state, page cache). Building A, B, A, B... exposes both crates to the
# same drift, so the ratio of medians is far steadier than either time alone.
# Unstable -Z flags reach only the measured rustc (the wrapper sets
# RUSTC_BOOTSTRAP for it alone), so dependencies never rebuild because of them.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
R=${R:-5}
N=${N:-100}
MODES=${MODES:-incr full}
JOBS=${JOBS:-1}
gen=$root/target/compile-cost
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$gen/target}
# Incremental compilation is switched per measured build with `-C incremental`
# (see `measure`), never through CARGO_INCREMENTAL: flipping that would change
# the fingerprints of the path dependencies and rebuild them.
export CARGO_INCREMENTAL=0
export CARGO_BUILD_JOBS=$JOBS
export RUSTC_WRAPPER=$gen/rustc-timed
unset RUSTC_WORKSPACE_WRAPPER RUSTC_BOOTSTRAP RUSTFLAGS CARGO_ENCODED_RUSTFLAGS || true

crates=(cost-baseline cost-extract)
mkdir -p "$gen"

# Writes stdin to $1 only when it differs, so a re-run does not dirty anything.
write() {
  local tmp
  tmp=$(mktemp)
  cat > "$tmp"
  if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mkdir -p "$(dirname "$1")"; mv "$tmp" "$1"; fi
}

# ---- the generated workspace ----------------------------------------------
write "$gen/Cargo.toml" <<EOF
# Generated by benches/compile_cost.sh; not part of the repository.
[workspace]
members = ["cost-baseline", "cost-extract"]
resolver = "3"

[workspace.package]
version = "0.0.0"
edition = "2024"
publish = false

[workspace.dependencies]
extract = { package = "extractable", path = "$root" }
serde = { version = "1", features = ["derive"] }
schemars = { version = "1", features = ["preserve_order"] }
serde_json = "1"
EOF
# The repository's lock file pins the same dependency versions it is tested with.
[ -f "$gen/Cargo.lock" ] || cp "$root/Cargo.lock" "$gen/Cargo.lock"

gen_crate() { # name with_extract
  local name=$1 with=$2 derives="Debug, Serialize, Deserialize, JsonSchema"
  write "$gen/$name/Cargo.toml" <<EOF
[package]
name = "$name"
version.workspace = true
edition.workspace = true
publish.workspace = true

[dependencies]
extract.workspace = true
serde.workspace = true
schemars.workspace = true
serde_json.workspace = true
EOF
  [ "$with" = 1 ] && derives="$derives, Extractable"
  {
    echo "//! Generated by benches/compile_cost.sh: $N record/item pairs."
    [ "$with" = 1 ] && echo "use extract::Extractable;"
    [ "$with" = 0 ] && [ "${LOADED:-0}" = 1 ] && echo "pub use extract::Validated as _Loaded;"
    echo "use schemars::JsonSchema;"
    echo "use serde::{Deserialize, Serialize};"
    local i
    for ((i = 0; i < N; i++)); do
      echo
      echo "#[derive($derives)]"
      [ "$with" = 1 ] && echo "#[check(sum(items$i.amount) == total$i, tolerance = 0.01)]"
      echo "pub struct Record$i {"
      echo "    pub id$i: String,"
      echo "    pub date$i: String,"
      echo "    pub note$i: Option<String>,"
      echo "    pub items$i: Vec<Item$i>,"
      echo "    pub total$i: f64,"
      echo "}"
      echo
      echo "#[derive($derives)]"
      echo "pub struct Item$i {"
      echo "    pub description: String,"
      echo "    pub amount: f64,"
      echo "}"
    done
    if [ "${USE:-0}" = 1 ]; then
      echo
      echo "/// Uses every record type once, as an application does."
      echo "pub fn use_all(value: &serde_json::Value) -> usize {"
      echo "    let mut ok = 0;"
      for ((i = 0; i < N; i++)); do
        if [ "$with" = 1 ]; then
          echo "    ok += extract::validate::<Record$i>(value, \"\").is_ok() as usize;"
        else
          echo "    ok += serde_json::from_value::<Record$i>(value.clone()).is_ok() as usize;"
        fi
      done
      echo "    ok"
      echo "}"
    fi
  } | write "$gen/$name/src/lib.rs"
}
gen_crate cost-baseline 0
gen_crate cost-extract 1

# The wrapper: every rustc cargo runs passes through; the measured crates'
# rustc is timed (COST_TIMES), run under callgrind (COST_CALLGRIND) and/or
# allowed -Z flags (COST_BOOTSTRAP).
write "$RUSTC_WRAPPER" <<'EOF'
#!/usr/bin/env bash
case " $* " in
  *" --crate-name cost_baseline "* | *" --crate-name cost_extract "*) ;;
  *) exec "$@" ;;
esac
[ -n "${COST_BOOTSTRAP:-}" ] && export RUSTC_BOOTSTRAP=1
if [ -n "${COST_CALLGRIND:-}" ]; then
  exec valgrind --tool=callgrind --trace-children=yes --callgrind-out-file=/dev/null \
    --log-file="$COST_CALLGRIND.%p" "$@"
fi
[ -n "${COST_TIMES:-}" ] && exec /usr/bin/time -f '%e %U %S %M' -a -o "$COST_TIMES" "$@"
exec "$@"
EOF
chmod +x "$RUSTC_WRAPPER"

cd "$gen"
log=$gen/cargo.log

# ---- one measured build -----------------------------------------------------
# measure CRATE MODE -> "wall cpu rss_mb" of the crate's rustc
measure() {
  local crate=$1 mode=$2 attempt extra=()
  [ "$mode" = incr ] && extra=(-C "incremental=$gen/incremental/$crate")
  for attempt in 1 2 3; do
    touch "$gen/$crate/src/lib.rs"
    : > "$gen/times"
    COST_TIMES=$gen/times cargo rustc -p "$crate" --lib -- ${extra[@]+"${extra[@]}"} 2> "$log" \
      || { cat "$log" >&2; exit 1; }
    if [ "$(grep -c '^ *Compiling' "$log")" = 1 ] && [ -s "$gen/times" ]; then
      tail -n 1 "$gen/times" | awk '{ printf "%.2f %.2f %.0f\n", $1, $2 + $3, $4 / 1024 }'
      return
    fi
    echo "  (a dependency was rebuilt too; repeating this build)" >&2
  done
  echo "cargo keeps rebuilding more than $crate: see $log" >&2
  exit 1
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "# compile cost of #[derive(Extractable)]: $N record/item pairs per crate, R=$R, -j$JOBS"
echo "# rustc $(rustc -V | cut -d' ' -f2-), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# generated crates: $gen; target dir: $CARGO_TARGET_DIR"
echo

# ---- dependencies, once -----------------------------------------------------
t0=$EPOCHREALTIME
cargo build -p cost-baseline -p cost-extract 2> "$log" || { cat "$log" >&2; exit 1; }
printf 'dependencies and first build: %.1f s (%s units compiled)\n\n' \
  "$(echo "$EPOCHREALTIME - $t0" | bc)" "$(grep -c '^ *Compiling' "$log")"

# ---- expanded code: deterministic --------------------------------------------
echo "expanded code (-Zunpretty=expanded):"
declare -A bytes
for crate in "${crates[@]}"; do
  touch "$gen/$crate/src/lib.rs"
  COST_BOOTSTRAP=1 cargo rustc -p "$crate" --lib -- -Zunpretty=expanded > "$gen/$crate.expanded.rs" 2> "$log" \
    || { cat "$log" >&2; exit 1; }
  read -r l b < <(wc -l -c < "$gen/$crate.expanded.rs")
  bytes[$crate]=$b
  printf '  %-14s %8d lines %10d bytes   (%s)\n' "$crate" "$l" "$b" "$gen/$crate.expanded.rs"
done
printf '  ratio          %s x bytes; per pair the derive adds %d bytes\n\n' \
  "$(echo "scale=2; ${bytes[cost-extract]} / ${bytes[cost-baseline]}" | bc)" \
  "$(( (bytes[cost-extract] - bytes[cost-baseline]) / N ))"

# ---- LLVM IR: deterministic, and sees what the expanded code hides ------------
# A generic function called from a derived impl (a `run_check` over a
# closure) is one line of expanded code but a whole body per
# type for LLVM; the number of functions the crate hands to LLVM counts it.
if [ "${IR:-1}" = 1 ]; then
  echo "LLVM IR of the crate (full build, -C codegen-units=1 --emit=llvm-ir):"
  declare -A irl
  for crate in "${crates[@]}"; do
    deps=$CARGO_TARGET_DIR/debug/deps
    rm -f "$deps/${crate//-/_}"-*.ll
    touch "$gen/$crate/src/lib.rs"
    cargo rustc -p "$crate" --lib -- -C codegen-units=1 --emit=llvm-ir 2> "$log" || { cat "$log" >&2; exit 1; }
    ll=$(ls "$deps/${crate//-/_}"-*.ll)
    irl[$crate]=$(wc -l < "$ll")
    printf '  %-14s %8d functions %10d lines\n' "$crate" "$(grep -c '^define' "$ll")" "${irl[$crate]}"
    rm -f "$ll"
  done
  printf '  ratio          %s x lines\n\n' "$(echo "scale=2; ${irl[cost-extract]} / ${irl[cost-baseline]}" | bc)"
fi

# ---- incremental dep graph: deterministic --------------------------------------
# A warm incremental build re-validates and re-saves the dependency graph of
# the crate's queries, so the per-type part of its node count follows what
# each derived type adds to the edit loop, without the machine's noise
# (-Zincremental-info). About 24,000 of the extract crate's extra nodes do
# not grow with N: naming `extract` loads its dependencies (the default
# `anthropic` client's tokio, reqwest, rustls...), and every trait lookup
# then scans them. LOADED=1 measures that part: the baseline then imports
# `extract` too.
if [ "${NODES:-1}" = 1 ]; then
  echo "incremental dependency graph (-Zincremental-info, warm session):"
  declare -A nodes
  for crate in "${crates[@]}"; do
    # Twice: the -Z flag's RUSTC_BOOTSTRAP invalidates the session once.
    for run in 1 2; do
      touch "$gen/$crate/src/lib.rs"
      COST_BOOTSTRAP=1 cargo rustc -p "$crate" --lib -- -C "incremental=$gen/incremental/$crate" -Zincremental-info \
        > "$gen/$crate.incr-info" 2>&1 || { cat "$gen/$crate.incr-info" >&2; exit 1; }
    done
    nodes[$crate]=$(sed -n 's/.*Total Node Count: \([0-9]*\).*/\1/p' "$gen/$crate.incr-info")
    edges=$(sed -n 's/.*Total Edge Count: \([0-9]*\).*/\1/p' "$gen/$crate.incr-info")
    if [ -z "${nodes[$crate]}" ] || [ -z "$edges" ]; then
      echo "no node or edge count in rustc's -Zincremental-info output: see $gen/$crate.incr-info" >&2
      exit 1
    fi
    printf '  %-14s %8d nodes %10d edges\n' "$crate" "${nodes[$crate]}" "$edges"
  done
  printf '  ratio          %s x nodes; per pair the derive adds %d nodes\n\n' \
    "$(echo "scale=3; ${nodes[cost-extract]} / ${nodes[cost-baseline]}" | bc)" \
    "$(( (nodes[cost-extract] - nodes[cost-baseline]) / N ))"
fi

# ---- timed builds, alternating ------------------------------------------------
# R=0 skips them (for the deterministic counts alone).
[ "$R" -gt 0 ] && for mode in $MODES; do
  for crate in "${crates[@]}"; do measure "$crate" "$mode" > /dev/null; done # warm-up
  echo "mode $mode: rustc of the crate alone, wall s / CPU s (user+sys) / peak RSS MB"
  printf '  %-6s %-24s %-24s\n' round cost-baseline cost-extract
  : > "$gen/$mode.baseline"
  : > "$gen/$mode.extract"
  for ((r = 1; r <= R; r++)); do
    read -r aw ac am < <(measure cost-baseline "$mode")
    read -r bw bc bm < <(measure cost-extract "$mode")
    echo "$aw $ac" >> "$gen/$mode.baseline"
    echo "$bw $bc" >> "$gen/$mode.extract"
    printf '  %-6s %-24s %-24s\n' "$r" "$aw / $ac / $am" "$bw / $bc / $bm"
  done
  aw=$(cut -d' ' -f1 "$gen/$mode.baseline" | median)
  ac=$(cut -d' ' -f2 "$gen/$mode.baseline" | median)
  bw=$(cut -d' ' -f1 "$gen/$mode.extract" | median)
  bc=$(cut -d' ' -f2 "$gen/$mode.extract" | median)
  printf '  %-6s %-24s %-24s\n' median "$aw / $ac" "$bw / $bc"
  printf '  ratio extract/baseline: wall %.2fx, CPU %.2fx\n\n' \
    "$(echo "scale=4; $bw / $aw" | bc)" "$(echo "scale=4; $bc / $ac" | bc)"
done

# ---- optional: where rustc spends the time -------------------------------------
if [ -n "${TIME_PASSES:-}" ]; then
  for mode in $MODES; do
    for crate in "${crates[@]}"; do
      extra=()
      [ "$mode" = incr ] && extra=(-C "incremental=$gen/incremental/$crate")
      # Twice for incr: the -Z flag's RUSTC_BOOTSTRAP invalidates the
      # incremental session once, so the second run is the warm one.
      for run in $([ "$mode" = incr ] && echo 1 2 || echo 1); do
        touch "$gen/$crate/src/lib.rs"
        COST_BOOTSTRAP=1 cargo rustc -p "$crate" --lib -- -Ztime-passes ${extra[@]+"${extra[@]}"} \
          > "$gen/$crate.$mode.passes" 2>&1 || { cat "$gen/$crate.$mode.passes" >&2; exit 1; }
      done
    done
    echo "time passes, mode $mode (-Ztime-passes, seconds; passes of 0.02 s or more in either crate):"
    awk 'FNR == 1 { f++ } /^time:/ { t = $2 + 0; name = $NF; if (!((f, name) in v)) v[f, name] = t;
           if (f == 2 && !(name in seen)) { seen[name] = 1; order[++n] = name } }
         END { printf "  %-48s %14s %14s\n", "pass", "cost-baseline", "cost-extract";
               for (i = 1; i <= n; i++) { k = order[i]; a = v[1, k] + 0; b = v[2, k] + 0;
                 if (a >= 0.02 || b >= 0.02) printf "  %-48s %14.3f %14.3f\n", k, a, b } }' \
      "$gen/cost-baseline.$mode.passes" "$gen/cost-extract.$mode.passes"
    echo
  done
fi

if [ -n "${INSTRUCTIONS:-}" ]; then
  for mode in $MODES; do
    echo "instructions of each crate's $mode build (callgrind, all rustc threads):"
    declare -A ins
    for crate in "${crates[@]}"; do
      extra=()
      if [ "$mode" = incr ]; then
        extra=(-C "incremental=$gen/incremental/$crate")
        measure "$crate" incr > /dev/null # the session is warm, as in the timed builds
      fi
      rm -f "$gen/callgrind."*
      touch "$gen/$crate/src/lib.rs"
      COST_CALLGRIND=$gen/callgrind cargo rustc -p "$crate" --lib -- ${extra[@]+"${extra[@]}"} 2> "$log" \
        || { cat "$log" >&2; exit 1; }
      ins[$crate]=$(cat "$gen/callgrind."* | sed -n 's/.*Collected : \([0-9]*\).*/\1/p' | awk '{ s += $1 } END { printf "%.0f\n", s }')
      printf '  %-14s %16d\n' "$crate" "${ins[$crate]}"
    done
    printf '  ratio          %s x\n' "$(echo "scale=3; ${ins[cost-extract]} / ${ins[cost-baseline]}" | bc)"
  done
  # Leave the crates fresh for a normal build.
  for crate in "${crates[@]}"; do touch "$gen/$crate/src/lib.rs"; done
  cargo build -p cost-baseline -p cost-extract 2> "$log"
fi
