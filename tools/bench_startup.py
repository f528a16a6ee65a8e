#!/usr/bin/env python3
"""Start-up and size of two hermes-mcp builds, measured in the same run.

Compares a baseline binary (e.g. the release build of an earlier commit) with the current one:
file size, relative relocations (work the dynamic loader does at every start), `--version`
exec time and page faults, and `serve` spawn -> `initialize` answered, in a bare Hermes home and
in one with 300 skills and a full memory (`serve` composes Hermes' context, the skills index
among it, before it answers; the size of the `instructions` is reported too). Reports medians
and the ratio current / baseline.

    git worktree add /tmp/base-tree <rev> && (cd /tmp/base-tree && cargo build --release)
    cargo build --release
    python3 tools/bench_startup.py --baseline /tmp/base-tree/target/release/hermes-mcp [--runs 200]

Options: --current (default target/release/hermes-mcp), --runs (exec runs per binary),
--init-runs (serve runs per binary), --json. Runs alternate between the two binaries so that
machine load falls on both alike.
"""
import argparse
import json
import os
import resource
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


def relocations(path):
    """Relative relocations in the binary (`readelf -r`), or None without readelf."""
    try:
        out = subprocess.run(["readelf", "-r", "-W", path], capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return sum(1 for line in out.splitlines() if "R_X86_64_RELATIVE" in line
               or "R_AARCH64_RELATIVE" in line)


def version_run(path):
    """Wall time (ms) and minor page faults of one `--version`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([path, "--version"], stdout=subprocess.DEVNULL, check=True)
    ms = (time.perf_counter() - t0) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ms, after.ru_minflt - before.ru_minflt


def skills_home(n=300):
    """A Hermes home with `n` skills in 12 categories and full memory files."""
    home = tempfile.mkdtemp(prefix="bench-startup-skills-")
    for i in range(n):
        d = Path(home, "skills", f"cat-{i % 12}", f"skill-{i:03}")
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(
            f"---\nname: skill-{i:03}\ndescription: What skill {i} does, in a line of about sixty "
            f"chars\n---\n# Skill {i}\n\nSteps.\n", encoding="utf-8")
    mem = Path(home, "memories")
    mem.mkdir()
    (mem / "MEMORY.md").write_text("\n§\n".join(f"Fact {i}: the project builds with make" for i in range(50)),
                                   encoding="utf-8")
    (mem / "USER.md").write_text("\n§\n".join(f"User preference {i}" for i in range(40)),
                                 encoding="utf-8")
    return home


def init_run(path, env):
    """ms from spawn to the `initialize` answer of `serve`, and its instructions' length."""
    t0 = time.perf_counter()
    p = subprocess.Popen([path, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=env)
    p.stdin.write((json.dumps(INIT) + "\n").encode())
    p.stdin.flush()
    while True:
        line = p.stdout.readline()
        if not line:
            raise RuntimeError(f"{path} serve exited before answering initialize")
        msg = json.loads(line)
        if msg.get("id") == 1:
            break
    ms = (time.perf_counter() - t0) * 1000
    p.stdin.close()
    p.wait(timeout=10)
    return ms, len((msg.get("result") or {}).get("instructions") or "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True)
    ap.add_argument("--current", default=str(ROOT / "target/release/hermes-mcp"))
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--init-runs", type=int, default=50)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    bins = {"baseline": a.baseline, "current": a.current}
    for name, path in bins.items():
        if not os.access(path, os.X_OK):
            sys.exit(f"{name} binary {path} is not executable: build it first (see --help)")
    home = tempfile.mkdtemp(prefix="bench-startup-")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "HERMES_HOME": home}
    env_skills = dict(env, HERMES_HOME=skills_home())
    res = {n: {"size_bytes": os.path.getsize(p), "relocations": relocations(p),
               "version_ms": [], "version_minflt": [], "init_ms": [], "init_300_skills_ms": [],
               "instructions_chars": 0, "instructions_300_skills_chars": 0}
           for n, p in bins.items()}
    for _ in range(a.runs):
        for n, p in bins.items():
            ms, flt = version_run(p)
            res[n]["version_ms"].append(ms)
            res[n]["version_minflt"].append(flt)
    for _ in range(a.init_runs):
        for n, p in bins.items():
            ms, chars = init_run(p, env)
            res[n]["init_ms"].append(ms)
            res[n]["instructions_chars"] = chars
            ms, chars = init_run(p, env_skills)
            res[n]["init_300_skills_ms"].append(ms)
            res[n]["instructions_300_skills_chars"] = chars
    summary = {}
    for n, r in res.items():
        summary[n] = {
            "size_mib": round(r["size_bytes"] / 2**20, 2),
            "relocations": r["relocations"],
            "version_ms_median": round(statistics.median(r["version_ms"]), 3),
            "version_minflt_median": statistics.median(r["version_minflt"]),
            "init_ms_median": round(statistics.median(r["init_ms"]), 3),
            "init_300_skills_ms_median": round(statistics.median(r["init_300_skills_ms"]), 3),
            "instructions_chars": r["instructions_chars"],
            "instructions_300_skills_chars": r["instructions_300_skills_chars"],
        }
    ratio = {k: (round(summary["current"][k] / summary["baseline"][k], 3)
                 if summary["baseline"][k] else None)
             for k in summary["current"] if summary["current"][k] is not None}
    if a.json:
        print(json.dumps({"summary": summary, "ratio_current_over_baseline": ratio}, indent=2))
        return
    print(f"{'':24}{'baseline':>12}{'current':>12}{'ratio':>8}")
    for k in summary["current"]:
        b, c = summary["baseline"][k], summary["current"][k]
        print(f"{k:24}{b!s:>12}{c!s:>12}{ratio.get(k)!s:>8}")
    print(f"({a.runs} --version runs and {a.init_runs} serve runs per binary, interleaved)")


if __name__ == "__main__":
    main()
