#!/usr/bin/env bash
# The seeded fuzz tests for minutes instead of seconds:
#   - the block splicer (tests/suite/migrate_fuzz.rs), ITERS iterations;
#   - the stdio line guard through a real `hermes-mcp serve`
#     (tests/suite/serve_fuzz.rs), LINES hostile lines in one session.
#   tools/fuzz.sh                              # 300000 splices, 200000 lines, time-based seed
#   ITERS=1000000 LINES=1000000 SEED=42 tools/fuzz.sh
#   ONLY=serve tools/fuzz.sh                   # just the line guard (or ONLY=migrate)
# The tests read HERMES_MCP_FUZZ_ITERS / HERMES_MCP_FUZZ_LINES and HERMES_MCP_FUZZ_SEED;
# a failure prints the seed (and the input or the owed ids), so SEED=... replays it.
# Runs in a loopback-only network namespace when it can (nothing may leave the machine).
set -euo pipefail
cd "$(dirname "$0")/.."
export HERMES_MCP_FUZZ_ITERS="${ITERS:-300000}"
export HERMES_MCP_FUZZ_LINES="${LINES:-200000}"
export HERMES_MCP_FUZZ_SEED="${SEED:-$(date +%s)}"
ns=()
if unshare -rn true 2>/dev/null; then
  ns=(unshare -rn sh -c 'ip link set lo up && exec "$@"' sh)
elif [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then
  ns=(unshare -n sh -c 'ip link set lo up && exec "$@"' sh)
else
  echo "fuzz.sh: could not isolate the network (no unshare); running anyway" >&2
fi
cargo build --release --tests >/dev/null
if [ "${ONLY:-}" != serve ]; then
  echo "fuzzing the block splicer: $HERMES_MCP_FUZZ_ITERS iterations, seed $HERMES_MCP_FUZZ_SEED" >&2
  "${ns[@]}" cargo test --offline --release --test all -- --exact suite::migrate_fuzz::migrate_fuzz_block_splicer --nocapture
fi
if [ "${ONLY:-}" != migrate ]; then
  echo "fuzzing the line guard: $HERMES_MCP_FUZZ_LINES lines, seed $HERMES_MCP_FUZZ_SEED" >&2
  "${ns[@]}" cargo test --offline --release --test all -- --exact suite::serve_fuzz::serve_fuzz_line_guard --nocapture
fi
