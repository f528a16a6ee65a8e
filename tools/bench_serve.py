#!/usr/bin/env python3
"""Benchmark MCP server start-up: hermes-mcp serve vs Hermes Agent's Python hermes-tools server.

For each server and run: spawn -> `initialize` answered (ms), `tools/list` round trip (ms),
peak RSS after tools/list (VmHWM, MiB), and the size of the tools/list answer (bytes).
Reports medians per server and the ratios Python / Rust, all measured in the same run.

    cargo build --release && python3 tools/bench_serve.py [--runs 30] [--py-runs 5] [--json]

Options: --bin (default target/release/hermes-mcp), --hermes-python (default $HERMES_PYTHON or
/opt/hermes-venv/bin/python; hermes-agent==0.19.0 with mcp==1.26.0), --skip-python.
Both servers get the same fresh HERMES_HOME (with the skills fixture when present).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "0"}}}


def vm_hwm_mib(pid):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def one_run(cmd, env):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         env=env, bufsize=-1)  # buffered reads: unbuffered readline is one syscall per byte

    def send(obj):
        p.stdin.write((json.dumps(obj) + "\n").encode())
        p.stdin.flush()

    def read_id(want):
        while True:
            line = p.stdout.readline()
            if not line:
                raise RuntimeError(f"server exited before answering id {want}")
            msg = json.loads(line)
            if msg.get("id") == want:
                return line

    send(INIT)
    read_id(1)
    t_init = time.perf_counter() - t0
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    t1 = time.perf_counter()
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
    line = read_id(2)
    t_list = time.perf_counter() - t1
    rss = vm_hwm_mib(p.pid)
    tools = len(json.loads(line)["result"]["tools"])
    p.stdin.close()
    p.wait(timeout=30)
    return {"init_ms": t_init * 1000, "list_ms": t_list * 1000, "rss_mib": rss,
            "list_bytes": len(line.rstrip(b"\n")), "tools": tools}


def bench(name, cmd, env, runs):
    one_run(cmd, env)  # warm the page cache (and Python's bytecode cache)
    rows = [one_run(cmd, env) for _ in range(runs)]
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    med.update({"name": name, "runs": runs,
                "init_ms_min": min(r["init_ms"] for r in rows), "init_ms_max": max(r["init_ms"] for r in rows)})
    return med


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "hermes-mcp"))
    ap.add_argument("--hermes-python", default=os.environ.get("HERMES_PYTHON", "/opt/hermes-venv/bin/python"))
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--py-runs", type=int, default=5)
    ap.add_argument("--skip-python", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if not Path(a.bin).exists():
        sys.exit(f"{a.bin} not found: run `cargo build --release` first")

    home = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    fixture = ROOT / "tests" / "fixtures" / "skills"
    if fixture.is_dir():
        shutil.copytree(fixture, home / "skills")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "HERMES_HOME": str(home), "LANG": "C.UTF-8"}

    results = [bench("hermes-mcp (Rust)", [a.bin, "serve"], env, a.runs)]
    if not a.skip_python:
        py = Path(a.hermes_python)
        if not py.exists():
            sys.exit(f"{py} not found: tools/test.sh installs hermes-agent==0.19.0 there (or pass --skip-python)")
        results.append(bench("hermes-agent 0.19.0 (Python)",
                             [str(py), "-m", "agent.transports.hermes_tools_mcp_server"], env, a.py_runs))
    shutil.rmtree(home, ignore_errors=True)

    if a.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{'server':30} {'runs':>4} {'init ms (median)':>17} {'min..max':>15} {'tools/list ms':>14} "
          f"{'peak RSS MiB':>13} {'tools':>6} {'list bytes':>11}")
    for r in results:
        print(f"{r['name']:30} {r['runs']:>4} {r['init_ms']:>17.2f} {r['init_ms_min']:>7.1f}..{r['init_ms_max']:<7.1f}"
              f" {r['list_ms']:>14.2f} {r['rss_mib']:>13.1f} {r['tools']:>6} {r['list_bytes']:>11}")
    if len(results) == 2:
        rs, py = results
        print(f"ratios Python/Rust: initialize {py['init_ms'] / rs['init_ms']:.0f}x, "
              f"tools/list {py['list_ms'] / rs['list_ms']:.1f}x, peak RSS {py['rss_mib'] / rs['rss_mib']:.1f}x")
    goals = results[0]
    print(f"goals (Rust): initialize <= 5 ms: {goals['init_ms']:.2f}; tools/list <= 2 ms: {goals['list_ms']:.2f}; "
          f"RSS <= 15 MiB: {goals['rss_mib']:.1f}")


if __name__ == "__main__":
    main()
