#!/usr/bin/env python3
"""Benchmark: skills_list / skill_view over a generated 500-skill tree.

Runs hermes-mcp's tools over stdio MCP (one `tools/call` per sample) and, as
the baseline measured in the same run on the same tree, Python Hermes' own
`tools/skills_tool.py` functions called in-process. "uncached" samples defeat
the 30 s listing cache both implementations keep (hermes-mcp: a new mtime on
the skills root; Python: its cache dict cleared); "cached" samples hit it.

Usage: /opt/hermes-venv/bin/python tools/bench-skills.py [path/to/hermes-mcp] [n_skills]
"""
import json, os, statistics, subprocess, sys, tempfile, time

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/hermes-mcp"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 500
SAMPLES = 15

root = tempfile.mkdtemp(prefix="skills-bench-")
home = os.path.join(root, "hermes")
skills = os.path.join(home, "skills")
per_cat = 20
for i in range(N):
    cat = f"category-{i // per_cat:02d}"
    d = os.path.join(skills, cat, f"skill-{i:04d}")
    os.makedirs(os.path.join(d, "references"))
    os.makedirs(os.path.join(d, "scripts"))
    with open(os.path.join(d, "SKILL.md"), "w") as f:
        f.write(
            f"---\nname: skill-{i:04d}\ndescription: Benchmark skill number {i} doing something useful.\n"
            f"version: 1.0.0\nmetadata:\n  hermes:\n    tags: [bench, t{i % 7}]\n    related_skills: [skill-{(i + 1) % N:04d}]\n"
            f"prerequisites:\n  commands: [sh]\n---\n\n# Skill {i}\n\n" + ("Some instructions. " * 60) + "\n"
        )
    with open(os.path.join(d, "references", "api.md"), "w") as f:
        f.write("# API\n" * 20)
    with open(os.path.join(d, "scripts", "run.py"), "w") as f:
        f.write("print('x')\n")
env = dict(HOME=os.path.join(root, "home"), HERMES_HOME=home, PATH=os.environ.get("PATH", ""))
os.makedirs(env["HOME"], exist_ok=True)
target = f"skill-{N // 2:04d}"


def median_ms(fn):
    fn()  # warm-up (page cache, imports)
    xs = []
    for _ in range(SAMPLES):
        t = time.perf_counter()
        fn()
        xs.append((time.perf_counter() - t) * 1000)
    return statistics.median(xs)


# ── hermes-mcp over stdio ──
p = subprocess.Popen([BIN, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
ids = iter(range(1, 10**9))


def rpc(method, params):
    i = next(ids)
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
    p.stdin.flush()
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == i:
            return m


rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}})
p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
p.stdin.flush()


def ours_list():
    r = rpc("tools/call", {"name": "skills_list", "arguments": {}})["result"]
    assert json.loads(r["content"][0]["text"])["count"] == N


bump = iter(range(10**9))


def ours_list_uncached():
    # A new root mtime invalidates the scan cache's signature (content unchanged).
    t = time.time() + 3600 + next(bump)  # newer than every child dir
    os.utime(skills, (t, t))
    ours_list()


def ours_view():
    r = rpc("tools/call", {"name": "skill_view", "arguments": {"name": target}})["result"]
    assert not r.get("isError"), r


def ours_ping():
    rpc("ping", {})


ping = median_ms(ours_ping)
ol = median_ms(ours_list_uncached)
olc = median_ms(ours_list)
ov = median_ms(ours_view)
p.stdin.close()
p.wait()

# ── Python Hermes, in-process (baseline) ──
os.environ.update(env)
import logging

logging.disable(logging.CRITICAL)
from tools import skills_tool  # noqa: E402


def py_list():
    skills_tool._SKILLS_CACHE.clear()
    assert json.loads(skills_tool.skills_list())["count"] == N


def py_view():
    skills_tool._SKILLS_CACHE.clear()
    assert json.loads(skills_tool.skill_view(target))["success"]


def py_list_cached():
    assert json.loads(skills_tool.skills_list())["count"] == N


pl = median_ms(py_list)
pv = median_ms(py_view)
plc = median_ms(py_list_cached)

print(f"tree: {N} skills in {N // per_cat} categories ({root})")
print(f"hermes-mcp stdio round trip (ping):     {ping:8.2f} ms")
print(f"skills_list  uncached: hermes-mcp (stdio) {ol:8.2f} ms | Python Hermes (in-process) {pl:8.2f} ms | ratio {pl / ol:5.1f}x")
print(f"skills_list  cached:   hermes-mcp (stdio) {olc:8.2f} ms | Python Hermes (in-process) {plc:8.2f} ms | ratio {plc / olc:5.1f}x")
print(f"skill_view   (never cached; full lookup walk): hermes-mcp (stdio) {ov:8.2f} ms | Python Hermes (in-process) {pv:8.2f} ms | ratio {pv / ov:5.1f}x")
