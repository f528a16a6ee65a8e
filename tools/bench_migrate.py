#!/usr/bin/env python3
"""Benchmark `hermes-mcp migrate --no-plugins` against Hermes' own Python
migrator on the same 40-server config, in the same run.

Each sample is a fresh process (what a user runs), and config.toml is reset to
the user's original file before every sample, so both tools do the full
read-translate-splice-write. Runs are interleaved so machine noise hits both.

Usage:
    cargo build --release
    tools/bench_migrate.py [--bin target/release/hermes-mcp] [--runs 41]
                           [--hermes-python /opt/hermes-venv/bin/python]
Prints the median wall time of each and the ratio; goal: hermes-mcp <= 20 ms.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

HERMES_SCRIPT = r"""
import pathlib, sys, yaml
from hermes_cli.codex_runtime_plugin_migration import migrate
cfg = yaml.safe_load(open(sys.argv[1])) or {}
r = migrate(cfg, codex_home=pathlib.Path(sys.argv[2]), discover_plugins=False)
sys.exit(0 if r.written and not r.errors else 1)
"""

USER_TOML = """# my codex settings
model = "gpt-5.5"
approval_policy = "on-request"

[features]
web_search = true

[tui]
notifications = true
"""


def config_yaml(n: int) -> str:
    lines = ["mcp_servers:"]
    for i in range(n):
        if i % 3 == 2:
            lines += [
                f"  remote{i}:",
                f"    url: https://mcp{i}.example.com/mcp",
                "    headers:",
                f"      Authorization: Bearer ${{TOKEN_{i}}}",
                "      X-Team: core",
                "    connect_timeout: 20",
            ]
        else:
            lines += [
                f"  local{i}:",
                "    command: npx",
                f'    args: ["-y", "@example/server-{i}", "--root", "/srv/{i}"]',
                "    env:",
                '      DEBUG: "1"',
                f"      API_KEY_{i}: ${{API_KEY_{i}}}",
                "    timeout: 120",
                "    tools:",
                "      include: [read, list]",
            ]
    return "\n".join(lines) + "\n"


def cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def sample(cmd, env, target: Path, cpu_times=None) -> float:
    target.write_text(USER_TOML)
    c0 = cpu()
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    if cpu_times is not None:
        cpu_times.append(cpu() - c0)
    if r.returncode != 0:
        sys.exit(f"{cmd[0]} failed ({r.returncode}): {r.stderr.decode(errors='replace')}")
    return dt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=str(ROOT / "target/release/hermes-mcp"))
    ap.add_argument("--runs", type=int, default=41)
    ap.add_argument("--servers", type=int, default=40)
    ap.add_argument(
        "--hermes-python",
        default=os.environ.get("HERMES_PYTHON", "/opt/hermes-venv/bin/python"),
    )
    a = ap.parse_args()
    if not Path(a.bin).exists():
        sys.exit(f"{a.bin} not found; run `cargo build --release` first")

    with tempfile.TemporaryDirectory(prefix="bench-migrate-") as tmp:
        tmp = Path(tmp)
        hermes_home, ours, theirs = tmp / "hermes", tmp / "codex-ours", tmp / "codex-hermes"
        for d in (hermes_home, ours, theirs):
            d.mkdir()
        (hermes_home / "config.yaml").write_text(config_yaml(a.servers))
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp)}
        ours_cmd = [a.bin, "migrate", "--no-plugins", "--hermes-home", str(hermes_home),
                    "--codex-home", str(ours)]
        theirs_cmd = [a.hermes_python, "-c", HERMES_SCRIPT, str(hermes_home / "config.yaml"), str(theirs)]
        # Warm both (page cache, .pyc files).
        for _ in range(3):
            sample(ours_cmd, env, ours / "config.toml")
            sample(theirs_cmd, env, theirs / "config.toml")
        t_ours, t_theirs, c_ours, c_theirs = [], [], [], []
        for _ in range(a.runs):
            t_ours.append(sample(ours_cmd, env, ours / "config.toml", c_ours))
            t_theirs.append(sample(theirs_cmd, env, theirs / "config.toml", c_theirs))
        n_ours = (ours / "config.toml").read_text().count("[mcp_servers.")
        m_ours, m_theirs = statistics.median(t_ours), statistics.median(t_theirs)
        print(f"{a.servers} servers, {a.runs} runs each (fresh process, config.toml reset before each run)")
        print(f"hermes-mcp migrate --no-plugins : median {m_ours * 1000:7.2f} ms "
              f"(min {min(t_ours) * 1000:.2f}, max {max(t_ours) * 1000:.2f}); "
              f"{n_ours} [mcp_servers.*] tables written")
        print(f"Hermes migrate() (python)       : median {m_theirs * 1000:7.2f} ms "
              f"(min {min(t_theirs) * 1000:.2f}, max {max(t_theirs) * 1000:.2f})")
        print(f"CPU time (user+sys) median: hermes-mcp {statistics.median(c_ours) * 1000:.2f} ms, "
              f"Hermes {statistics.median(c_theirs) * 1000:.2f} ms")
        print(f"load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        print(f"ratio: hermes-mcp takes {m_ours / m_theirs:.3f}x the time of Hermes' migrator "
              f"({m_theirs / m_ours:.1f}x faster); goal <= 20 ms: "
              f"{'met' if m_ours <= 0.020 else 'NOT met'}")


if __name__ == "__main__":
    main()
