#!/usr/bin/env python3
"""Benchmark web_extract's built-in extractor against mcp-server-fetch.

Both servers are driven the same way: as stdio MCP servers, one tools/call per
page, pages served from a loopback HTTP server. Measured in the same run:
pages per second (extraction calls only, server startup excluded) and
token-level F1 of the returned text against the text Mozilla Readability
extracts (`expected.html`) for every page of the readability corpus.

Usage:
  tools/bench_web.py [--corpus DIR] [--bin target/release/hermes-mcp]
                     [--fetch-venv tools/.venv-bench] [--rounds 3] [--dump DIR]

The corpus defaults to ../shared/corpora/readability (relative to the repo),
then /work/shared/corpora/readability; the script exits with a clear message
when it is absent. mcp-server-fetch is installed into --fetch-venv on first
use (`python3 -m venv` + `pip install mcp-server-fetch`); it runs with
--allow-private-ips (the pages are on loopback) and --ignore-robots-txt (we do
not fetch robots.txt either, so both do one HTTP request per page).
"""

import argparse
import functools
import html.parser
import http.server
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from untrusted import unwrap_untrusted  # tools/untrusted.py

REPO = Path(__file__).resolve().parent.parent


def find_corpus(arg):
    cands = [Path(arg)] if arg else [
        REPO.parent / "shared" / "corpora" / "readability",
        Path("/work/shared/corpora/readability"),
    ]
    for c in cands:
        if (c / "pages").is_dir():
            return c
    sys.exit(
        "error: the readability corpus is not available (looked in: "
        + ", ".join(str(c) for c in cands)
        + ").\nhint: pass --corpus DIR pointing at a directory with pages/<name>/{source,expected}.html"
    )


class TextOf(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.out = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self.skip:
            self.skip -= 1

    def handle_data(self, data):
        if not self.skip:
            self.out.append(data)


def html_text(s):
    p = TextOf()
    p.feed(s)
    return " ".join(p.out)



LINK_TARGET = re.compile(r"\]\([^)]*\)")


def md_text(s):
    # Markdown link/image targets are not page text; drop them for both servers.
    return LINK_TARGET.sub("]", s)


def tokens(s):
    return Counter(t.lower() for t in re.split(r"[^\w]+", s, flags=re.UNICODE) if t and t != "_")


def f1(got, want):
    g, w = tokens(md_text(got)), tokens(want)
    gn, wn = sum(g.values()), sum(w.values())
    if gn == 0 or wn == 0:
        return 1.0 if gn == wn else 0.0
    common = sum((g & w).values())
    if common == 0:
        return 0.0
    p, r = common / gn, common / wn
    return 2 * p * r / (p + r)


class Mcp:
    """A minimal stdio MCP client."""

    def __init__(self, argv, env=None):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env, text=True, bufsize=1)
        self.id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "0"}})
        self.notify("notifications/initialized", {})

    def notify(self, method, params):
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}) + "\n")
        self.p.stdin.flush()

    def request(self, method, params):
        self.id += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method,
                                       "params": params}) + "\n")
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError(f"{method}: server exited")
            msg = json.loads(line)
            if msg.get("id") == self.id and "method" not in msg:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]

    def call(self, name, args):
        r = self.request("tools/call", {"name": name, "arguments": args})
        return "".join(b.get("text", "") for b in r.get("content", []) if b.get("type") == "text")

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=10)
        except Exception:
            self.p.kill()


def ensure_fetch_venv(venv):
    exe = venv / "bin" / "mcp-server-fetch"
    if exe.exists():
        return exe
    print(f"installing mcp-server-fetch into {venv} ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "mcp-server-fetch"], check=True)
    return exe


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus")
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "hermes-mcp"))
    ap.add_argument("--fetch-venv", default=str(REPO / "tools" / ".venv-bench"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dump", help="write each server's text per page into this directory")
    ap.add_argument("--only", help="comma-separated page names")
    a = ap.parse_args()

    corpus = find_corpus(a.corpus)
    pages = sorted(p.name for p in (corpus / "pages").iterdir() if (p / "source.html").exists())
    if a.only:
        pages = [p for p in pages if p in a.only.split(",")]
    if not Path(a.bin).exists():
        sys.exit(f"error: {a.bin} not found\nhint: cargo build --release (or pass --bin)")
    fetch_exe = ensure_fetch_venv(Path(a.fetch_venv))

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            name = self.path.strip("/")
            f = corpus / "pages" / name / "source.html"
            if not f.exists():
                self.send_error(404)
                return
            body = f.read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    expected = {p: html_text((corpus / "pages" / p / "expected.html").read_text(errors="replace"))
                for p in pages}

    import tempfile
    home = tempfile.mkdtemp(prefix="bench-hermes-")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "HERMES_HOME": home,
           "HERMES_ALLOW_PRIVATE_URLS": "1"}

    servers = {
        "hermes-mcp": (
            [a.bin, "serve"], env,
            lambda c, url: json.loads(unwrap_untrusted(c.call("web_extract", {"urls": [url], "char_limit": 500000})))
            ["results"][0].get("content") or "",
        ),
        "mcp-server-fetch": (
            [str(fetch_exe), "--allow-private-ips", "--ignore-robots-txt"],
            {"PATH": os.environ.get("PATH", ""), "HOME": home},
            lambda c, url: re.sub(r"^Contents of \S+:\n", "",
                                  c.call("fetch", {"url": url, "max_length": 999999})),
        ),
    }
    results = {}
    for name, (argv, env_, extract) in servers.items():
        c = Mcp(argv, env_)
        extract(c, f"{base}/{pages[0]}/")  # warm-up
        texts = {}
        t0 = time.perf_counter()
        for _ in range(a.rounds):
            for p in pages:
                texts[p] = extract(c, f"{base}/{p}/")
        dt = time.perf_counter() - t0
        c.close()
        scores = {p: f1(texts[p], expected[p]) for p in pages}
        results[name] = {"pps": len(pages) * a.rounds / dt, "scores": scores, "texts": texts}
        if a.dump:
            d = Path(a.dump) / name
            d.mkdir(parents=True, exist_ok=True)
            for p, t in texts.items():
                (d / f"{p}.md").write_text(t)

    ours, base_ = results["hermes-mcp"], results["mcp-server-fetch"]
    mean = lambda s: sum(s.values()) / len(s)
    print(f"readability corpus: {len(pages)} pages x {a.rounds} rounds, loopback, sequential tools/call")
    print(f"{'server':<18} {'pages/s':>9} {'mean F1':>8} {'median F1':>10}")
    for name, r in results.items():
        s = sorted(r["scores"].values())
        print(f"{name:<18} {r['pps']:>9.1f} {mean(r['scores']):>8.3f} {s[len(s)//2]:>10.3f}")
    print(f"speed ratio hermes-mcp / mcp-server-fetch: {ours['pps'] / base_['pps']:.1f}x")
    print(f"F1 difference (hermes-mcp - mcp-server-fetch): {mean(ours['scores']) - mean(base_['scores']):+.3f}")
    wins = sum(1 for p in pages if ours["scores"][p] >= base_["scores"][p])
    print(f"pages where hermes-mcp F1 >= mcp-server-fetch: {wins}/{len(pages)}")
    print("worst pages (hermes-mcp):")
    for p in sorted(pages, key=lambda p: ours["scores"][p])[:8]:
        print(f"  {p:<40} hermes-mcp {ours['scores'][p]:.3f}   mcp-server-fetch {base_['scores'][p]:.3f}")
    srv.shutdown()


if __name__ == "__main__":
    main()
