#!/usr/bin/env bash
# Regenerates testdata/special/hf-special.jsonl (Hugging Face's tokenizers, npm
# tokenizers@0.23.2 from package-lock.json), llama-server-special.jsonl and
# llama-server-eog.jsonl (llama.cpp's llama-server from ../shared/bin). go test reads the committed
# vectors and needs neither Node nor the server. Run from anywhere:
#
#   bash tokenizer/testdata/gen/special.sh
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd ../../.. && pwd)
shared=${KVREF_SHARED:-$root/../shared}
npm ci --no-audit --no-fund --silent
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && KVREF_WRITE_SPECIAL=$tmp go test ./tokenizer -run '^TestWriteSpecialFixtures$' -count=1 >/dev/null)
node special_hf.js "$tmp" > ../special/hf-special.jsonl
node special_llama_server.js "$tmp" "$shared/bin/llama-server" ../special
wc -l ../special/*.jsonl
