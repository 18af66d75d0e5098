#!/usr/bin/env bash
# Renders a sample run report the way a person sees it: writes the HTML with
# the offline example (`cargo run --example report`, a scripted model), then
# screenshots it with headless Chromium.
#
#   scripts/render_report.sh [out-dir]    # default: target/report-sample
#
# Writes report.png (the first screen, 1200x1600: WINDOW_SIZE changes it) and
# report-full.png (the whole page in one tall window: FULL_HEIGHT, default
# 4000). Needs `chromium` (Debian: apt-get install chromium); it is not part
# of CI. Prints the paths of the HTML file and the PNGs.
set -euo pipefail
cd "$(dirname "$0")/.."

out="${1:-${CARGO_TARGET_DIR:-target}/report-sample}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
html="$out/report.html"
png="$out/report.png"
full="$out/report-full.png"

cargo run --quiet --example report -- "$html" >"$out/stats.txt"
tail -n 1 "$out/stats.txt"

browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
if [[ -z "$browser" ]]; then
    echo "no chromium found: install it (apt-get install chromium) to render $html" >&2
    exit 1
fi
# A throwaway profile, so nothing of the user's browser is read or written.
profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
shoot() { # PNG WINDOW-SIZE
    "$browser" --headless --disable-gpu --no-sandbox --hide-scrollbars \
        --user-data-dir="$profile" --window-size="$2" \
        --screenshot="$1" "file://$html" 2>>"$out/chromium.log"
    echo "$1"
}
: >"$out/chromium.log"
shoot "$png" "${WINDOW_SIZE:-1200,1600}"
shoot "$full" "1200,${FULL_HEIGHT:-4000}"
