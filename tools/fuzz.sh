#!/usr/bin/env bash
# The block-splicer fuzz test (tests/suite/migrate_fuzz.rs) for minutes instead of seconds.
#   tools/fuzz.sh                 # 300000 iterations from a time-based seed
#   ITERS=1000000 SEED=42 tools/fuzz.sh
# The test reads HERMES_MCP_FUZZ_ITERS and HERMES_MCP_FUZZ_SEED; a failure prints
# the seed, the iteration and the input, so it can be replayed with SEED=...
set -euo pipefail
cd "$(dirname "$0")/.."
export HERMES_MCP_FUZZ_ITERS="${ITERS:-300000}"
export HERMES_MCP_FUZZ_SEED="${SEED:-$(date +%s)}"
echo "fuzzing the block splicer: $HERMES_MCP_FUZZ_ITERS iterations, seed $HERMES_MCP_FUZZ_SEED" >&2
exec cargo test --release --test all -- --exact suite::migrate_fuzz::migrate_fuzz_block_splicer --nocapture
