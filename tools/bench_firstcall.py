#!/usr/bin/env python3
"""First call against warm call, per tool, in a fresh `hermes-mcp serve`.

For each tool: start a fresh server on a realistic Hermes home (a few skills, memory
entries, a state.db of 300 sessions filled through Hermes' own SessionDB, a kanban board,
a local image, a loopback web page), answer `initialize` and `tools/list` as Codex does,
then call the tool three times with the same arguments. The first call pays whatever the
tool builds on first use (regex sets, SQLite opens, TLS configurations, caches); the
second and third are warm. Reported per tool: median first call, median warm call (the
faster of calls two and three), their ratio and difference, over --rounds fresh servers.
The goal (issue #31): every first call within 2x its warm time, or at most 20 ms above it.

Under Codex a first call never follows `tools/list` at once: the model's first turn comes in
between (a second or more). `--think-ms` (default 500) waits that long after `tools/list`
before the first call, so what `serve` warms in the background meanwhile counts as it does
under Codex; `--think-ms 0` measures the first call straight after the list.

Also reported: spawn -> `initialize` answered, to show warm-up work stays off that path.

Run with Hermes' Python (the state.db is filled through hermes_state):
    cargo build --release
    /opt/hermes-venv/bin/python tools/bench_firstcall.py [--bin target/release/hermes-mcp] [--rounds 7]
"""

import argparse
import functools
import http.server
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path

from bench_sessions import state_db  # tools/bench_sessions.py

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = 300


def png(w=64, h=48) -> bytes:
    """A small valid RGB PNG."""
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    rows = b"".join(
        b"\0" + bytes(v for x in range(w) for v in (x * 4 % 256, y * 5 % 256, 128)) for y in range(h)
    )
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


PAGE = (
    "<html><head><title>Bench article</title></head><body><nav>menu</nav><article><h1>Bench</h1>"
    + "".join(f"<p>Paragraph {i} of a plain article with some words to extract.</p>" for i in range(60))
    + "</article><footer>foot</footer></body></html>"
).encode()


def make_home(root: Path, port: int) -> Path:
    home = root / "hermes"
    for i in range(5):
        d = home / "skills" / ("devops" if i % 2 else "writing") / f"skill-{i}"
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(
            f"---\nname: skill-{i}\ndescription: Skill number {i} for the benchmark.\n---\n"
            + "# Steps\n" + "Do the thing carefully.\n" * 40
        )
    mem = home / "memories"
    mem.mkdir(parents=True)
    (mem / "MEMORY.md").write_text("\n§\n".join(f"Project fact {i}: uses tool {i}." for i in range(8)))
    (mem / "USER.md").write_text("Prefers short answers.\n§\nWorks in UTC.")
    shutil.copy(state_db(SESSIONS, sys.executable), home / "state.db")
    (home / "pic.png").write_bytes(png())
    (home / "config.yaml").write_text(
        "toolsets:\n  - hermes-cli\n  - kanban\n"
        "security:\n  allow_private_urls: true\n"
        "agent:\n  image_input_mode: native\n"
        f"web:\n  extract_backend: builtin\n"
    )
    return home


def tool_calls(home: Path, port: int):
    return [
        ("skills_list", {}),
        ("skill_view", {"name": "skill-3"}),
        ("memory", {"action": "replace", "target": "memory", "old_text": "Project fact 0",
                    "content": "Project fact 0: uses tool 0."}),
        # Text beyond ASCII takes the threat scan's Unicode patterns (built apart from the ASCII ones).
        ("memory", {"action": "replace", "target": "memory", "old_text": "Project fact 1",
                    "content": "Project fact 1: the café's naïve résumé tool."}, "memory (non-ASCII entry)"),
        ("session_search", {"query": "auth"}),
        ("session_search", {}),
        ("kanban_list", {}),
        ("vision_analyze", {"image_url": str(home / "pic.png"), "question": "what is it?"}),
        ("web_extract", {"urls": [f"http://127.0.0.1:{port}/article.html"]}),
    ]


class Pages(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *a):
        pass


class Mcp:
    def __init__(self, binary: str, env: dict, think_ms: float):
        t0 = time.perf_counter()
        self.p = subprocess.Popen([binary, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env, text=True, bufsize=1)
        self.id = 0
        self.req("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "codex-mcp-client", "version": "0.169.0"}})
        self.init_ms = (time.perf_counter() - t0) * 1000
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        self.tools = {t["name"] for t in self.req("tools/list", {})["result"]["tools"]}
        time.sleep(think_ms / 1000)

    def req(self, method, params):
        self.id += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method,
                                       "params": params}) + "\n")
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                sys.exit(f"error: the server exited during {method}")
            msg = json.loads(line)
            if msg.get("id") == self.id:
                return msg

    def timed_call(self, name, args):
        t0 = time.perf_counter()
        r = self.req("tools/call", {"name": name, "arguments": args})
        ms = (time.perf_counter() - t0) * 1000
        if "result" not in r or r["result"].get("isError"):
            sys.exit(f"error: {name} failed: {json.dumps(r)[:400]}")
        return ms

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=str(ROOT / "target/release/hermes-mcp"))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--think-ms", type=float, default=500,
                    help="wait between tools/list and the first call (a model's turn)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if not Path(a.bin).exists():
        sys.exit(f"error: {a.bin} not found\nhint: cargo build --release, or pass --bin")
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    port = srv.server_address[1]
    rows, inits = [], []
    with tempfile.TemporaryDirectory() as tmp:
        home = make_home(Path(tmp), port)
        env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "HERMES_HOME": str(home),
               "TZ": "UTC", "HERMES_KANBAN_BOARD": "bench"}
        for name, args, *label in tool_calls(home, port):
            firsts, warms = [], []
            for _ in range(a.rounds):
                m = Mcp(a.bin, env, a.think_ms)
                inits.append(m.init_ms)
                if name not in m.tools:
                    sys.exit(f"error: {name} is not offered on the bench home")
                t = [m.timed_call(name, args) for _ in range(3)]
                m.close()
                firsts.append(t[0])
                warms.append(min(t[1:]))
            first, warm = statistics.median(firsts), statistics.median(warms)
            label = label[0] if label else name if args else f"{name} (no arguments)"
            rows.append({"tool": label, "first_ms": round(first, 2), "warm_ms": round(warm, 2),
                         "ratio": round(first / warm, 2) if warm else None,
                         "over_ms": round(first - warm, 2),
                         "ok": first <= 2 * warm or first - warm <= 20})
    srv.shutdown()
    if a.json:
        print(json.dumps({"rows": rows, "think_ms": a.think_ms,
                          "initialize_ms": statistics.median(inits)}, indent=2))
        return
    print(f"{'tool':34} {'first ms':>9} {'warm ms':>9} {'ratio':>6} {'over ms':>8}  goal")
    for r in rows:
        print(f"{r['tool']:34} {r['first_ms']:9.2f} {r['warm_ms']:9.2f} {r['ratio']:6.2f} "
              f"{r['over_ms']:8.2f}  {'ok' if r['ok'] else 'MISSED'}")
    print(f"first call {a.think_ms:.0f} ms after tools/list")
    print(f"spawn -> initialize answered: median {statistics.median(inits):.2f} ms over {len(inits)} servers")


if __name__ == "__main__":
    main()
