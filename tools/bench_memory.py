#!/usr/bin/env python3
"""session_search benchmark: hermes-mcp's discovery against Hermes' own, on one state.db.

Builds a state.db of 10,000 sessions (about 65,000 messages) through Hermes'
SessionDB API with tests/fixtures/session_search/fill_state.py, cached under
/tmp/hermes-mcp-bench-sessions/ (keyed by that script's hash and the count),
copies it into a temporary Hermes home, and measures the median latency of a
set of discovery calls (common and rare terms, both sorts, a phrase, a prefix,
CJK on the trigram and LIKE paths, a title, no match), plus browse:

  * through `hermes-mcp serve` (an MCP tools/call round trip over stdio, warm);
  * through Hermes' registry handler in-process
    (`registry.get_entry("session_search").handler(args, db=..., current_session_id=...)`)
    with one warm read-write SessionDB, as Hermes' agent holds it - the
    baseline the ratios are computed against.

The two run interleaved, call by call, so load on the machine hits both
alike. Every answer is compared first: the benchmark refuses to time calls
whose results differ.

The floor both sides pay: each discovery call's search statement alone (the
ranked FTS5 query, or the LIKE scan for short CJK queries, as hermes-mcp runs
it: no snippet, ids and session columns only), timed on Hermes' own warm
connection (CPython's SQLite), reported with its share of hermes-mcp's call.

Run with Hermes' Python (it imports hermes_state):
    cargo build --release
    TZ=UTC /opt/hermes-venv/bin/python tools/bench_memory.py [--bin target/release/hermes-mcp] [--n 20]
"""

import argparse
import json
import math
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_sessions import state_db  # tools/bench_sessions.py: the cached, Hermes-filled state.db

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = 10_000

DISCOVERY = [
    ("common term", {"query": "auth"}),
    ("two terms, limit 5", {"query": "JWT auth", "limit": 5}),
    ("rare-ish term", {"query": "p99"}),
    ("sort newest", {"query": "kubernetes", "sort": "newest"}),
    ("sort oldest, limit 10", {"query": "postgres vacuum", "sort": "oldest", "limit": 10}),
    ("phrase", {"query": '"helm chart"'}),
    ("prefix", {"query": "deploy*"}),
    ("OR, tool role", {"query": "read_file OR terminal", "role_filter": "user,assistant,tool"}),
    ("CJK trigram", {"query": "数据库迁移"}),
    ("CJK LIKE", {"query": "迁移"}),
    ("title", {"query": "Auth refactor"}),
    ("no match", {"query": "zebra"}),
]
BROWSE = [("browse", {})]


def search_sql(db, args):
    """The search statement hermes-mcp runs for discovery `args`, and its parameters."""
    q = db._sanitize_fts5_query(args["query"])
    order = {"newest": "ORDER BY m.timestamp DESC, rank", "oldest": "ORDER BY m.timestamp ASC, rank"}.get(
        args.get("sort"), "ORDER BY rank"
    )
    roles = [r.strip() for r in args.get("role_filter", "user,assistant").split(",") if r.strip()]
    tail = f" AND s.source NOT IN (?,?) AND m.role IN ({','.join('?' * len(roles))})"
    params = ["subagent", "tool", *roles, 300, 0]
    cols = "m.id, m.session_id, m.role, s.source, s.model, s.started_at"
    if not db._contains_cjk(q):
        table, match = "messages_fts", q
    else:
        raw = q.strip('"').strip()
        toks = raw.split()
        if any(db._count_cjk(t) < 3 for t in toks if t.upper() not in {"AND", "OR", "NOT"} and db._contains_cjk(t)):
            terms = [t for t in toks if t.upper() not in {"AND", "OR", "NOT"}] or [raw]
            like = " OR ".join(["(m.content LIKE ? ESCAPE '\\' OR m.tool_name LIKE ? ESCAPE '\\' OR m.tool_calls LIKE ? ESCAPE '\\')"] * len(terms))
            sql = (f"SELECT {cols}, substr(m.content, max(1, instr(m.content, ?) - 40), 120) FROM messages m "
                   f"JOIN sessions s ON s.id = m.session_id WHERE ({like}){tail} ORDER BY m.timestamp DESC LIMIT ? OFFSET ?")
            esc = [t.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") for t in terms]
            return sql, [terms[0], *[f"%{e}%" for e in esc for _ in range(3)], *params]
        table = "messages_fts_trigram"
        match = " ".join(t if t.upper() in {"AND", "OR", "NOT"} else '"' + t.replace('"', '""') + '"' for t in toks)
    sql = (f"SELECT {cols} FROM {table} JOIN messages m ON m.id = {table}.rowid JOIN sessions s ON s.id = m.session_id "
           f"WHERE {table} MATCH ? AND (m.active = 1 OR m.compacted = 1){tail} {order} LIMIT ? OFFSET ?")
    return sql, [match, *params]


class Mcp:
    def __init__(self, binary: str, env: dict):
        self.p = subprocess.Popen(
            [binary, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True, bufsize=1
        )
        self.id = 0
        self.req("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}})
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")

    def req(self, method, params):
        self.id += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}) + "\n")
        self.p.stdin.flush()
        while True:
            msg = json.loads(self.p.stdout.readline())
            if msg.get("id") == self.id:
                return msg

    def call(self, args) -> str:
        r = self.req("tools/call", {"name": "session_search", "arguments": args})["result"]
        return r["content"][0]["text"]

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=str(ROOT / "target/release/hermes-mcp"))
    ap.add_argument("--n", type=int, default=20)
    a = ap.parse_args()
    if os.environ.get("TZ") != "UTC":
        sys.exit("run with TZ=UTC (both sides format local times)")
    src = state_db(SESSIONS, sys.executable).parent
    tmp = Path(tempfile.mkdtemp(prefix="bench-sessions-"))
    try:
        home = tmp / "hermes"
        shutil.copytree(src, home)
        (tmp / "home").mkdir()
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp / "home"), "HERMES_HOME": str(home), "TZ": "UTC"}
        os.environ.update(env)
        from hermes_state import SessionDB  # noqa: E402  (HERMES_HOME must be set first)
        import tools.session_search_tool  # noqa: E402,F401
        from tools.registry import registry  # noqa: E402

        handler = registry.get_entry("session_search").handler
        db = SessionDB()
        hermes = lambda args: handler(args, db=db, current_session_id=None)  # noqa: E731
        m = Mcp(a.bin, env)
        rows = []
        for label, args in DISCOVERY + BROWSE:
            ours, theirs = m.call(args), hermes(args)
            if ours != theirs:
                sys.exit(f"{label}: results differ\n  hermes-mcp: {ours[:400]}\n  hermes:     {theirs[:400]}")
            t_ours, t_hermes, t_sql = [], [], []
            stmt = search_sql(db, args) if "query" in args else None
            for _ in range(a.n):
                t = time.perf_counter()
                m.call(args)
                t_ours.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                hermes(args)
                t_hermes.append((time.perf_counter() - t) * 1000)
                if stmt:
                    t = time.perf_counter()
                    db._conn.execute(*stmt).fetchall()
                    t_sql.append((time.perf_counter() - t) * 1000)
            count = json.loads(ours).get("count")
            floor = statistics.median(t_sql) if t_sql else None
            rows.append((label, count, statistics.median(t_ours), statistics.median(t_hermes), floor))
        m.close()
        db.close()

        ro = sqlite3.connect(f"file:{home / 'state.db'}?mode=ro", uri=True)
        msgs = ro.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        ro.close()
        print(f"state.db: {SESSIONS} sessions, {msgs} messages ({src})")
        print(f"median latency in ms over {a.n} calls; identical results checked; ratio = Hermes / hermes-mcp")
        print("search = the call's search statement alone on Hermes' connection; share = search / hermes-mcp")
        print(f"{'call':<24} {'results':>7} {'hermes-mcp':>11} {'hermes':>8} {'ratio':>7} {'search':>8} {'share':>6}")
        for label, count, o, h, f in rows:
            fl = f"{f:>8.2f} {f / o:>6.0%}" if f is not None else ""
            print(f"{label:<24} {count!s:>7} {o:>11.2f} {h:>8.2f} {h / o:>6.1f}x {fl}")
        disc = rows[: len(DISCOVERY)]
        geo = math.exp(statistics.mean(math.log(r[3] / r[2]) for r in disc))
        total_o, total_h = sum(r[2] for r in disc), sum(r[3] for r in disc)
        print(f"\ndiscovery, all {len(disc)} calls: hermes-mcp {total_o:.1f} ms, Hermes {total_h:.1f} ms, "
              f"ratio of totals {total_h / total_o:.1f}x, geometric mean of ratios {geo:.1f}x")
        print(f"goal (discovery at least 5x faster): {'met' if geo >= 5 else 'MISSED'}")
        print(json.dumps({"rows": rows, "geomean": geo}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
