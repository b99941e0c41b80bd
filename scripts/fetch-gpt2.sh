#!/usr/bin/env bash
# Fetches GPT-2's encoder.json and vocab.bpe into the cache (checked by sha256) and prints the folder.
set -euo pipefail
source "$(dirname "$0")/common.sh"
tw_fetch_gpt2
echo "$TOKENWIRE_GPT2_DIR"
