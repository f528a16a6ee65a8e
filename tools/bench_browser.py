#!/usr/bin/env python3
"""Benchmark: hermes-mcp's browser tools vs Microsoft's @playwright/mcp, same run.

Both servers drive the same Debian Chromium (/usr/bin/chromium) over stdio MCP
against the same pages served on 127.0.0.1:
  * simple  - tests/fixtures/browser/form.html
  * big     - a generated 2,000-element page (1,000 list items with a link each)
  * table   - a generated 1,000-row table, each row with a text input, a select and a button
  * article - a page of ../shared/corpora/readability/pages/<name>/source.html (--corpus DIR)

Measured per server and page:
  * cold: the first browser_navigate of a fresh server (includes Chromium launch),
    median of --cold-runs fresh servers, after one uncounted start that brings
    the server's and Chromium's files into the page cache (a first start after
    a build otherwise measures the disk)
  * warm: browser_navigate + browser_snapshot, median of N runs
  * snapshot size: characters of the browser_snapshot text the model receives
    (ours: the JSON "snapshot" field; Playwright: the whole text content)

Usage:
  tools/bench_browser.py [--bin target/release/hermes-mcp] [--playwright DIR] [--runs 7] [--article wikipedia]
  tools/bench_browser.py --baseline-bin OLD/target/release/hermes-mcp   (another build instead of Playwright)
  --interleave [--seed N]: both servers up at once, their cold starts and warm navigations
  alternating in a (seeded) random order, 50 ms apart, so that a drift in the machine's speed
  during the run falls on both sides alike (by default each side runs whole, one after the other,
  its navigations back to back)
DIR must contain node_modules/@playwright/mcp (npm install @playwright/mcp@0.0.83).
"""

import argparse
import http.server
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from untrusted import unwrap_untrusted  # tools/untrusted.py

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "browser")
# The readability corpus ships beside the repository in ../shared (or pass --corpus).
CORPUS = os.path.join(os.path.dirname(ROOT), "shared", "corpora", "readability", "pages")


def big_page(n=2000):
    rows = "".join(
        f'<li><a href="/item/{i}">Item number {i}</a> <span>detail text for row {i}</span></li>'
        for i in range(n // 2)
    )
    return f"<!doctype html><html><head><title>Big page</title></head><body><h1>Big page</h1><ul>{rows}</ul></body></html>"


def table_page(n=1000):
    rows = "".join(
        f'<tr><td>{i}</td><td>Row {i}</td><td><input aria-label="Qty {i}" value="{i % 7}"></td>'
        f'<td><select aria-label="Size {i}"><option>S</option><option selected>M</option><option>L</option></select></td>'
        f'<td><button>Save {i}</button></td></tr>'
        for i in range(n)
    )
    return ("<!doctype html><html><head><title>Table page</title></head><body><h1>Orders</h1>"
            "<table><thead><tr><th>#</th><th>Name</th><th>Qty</th><th>Size</th><th>Action</th></tr></thead>"
            f"<tbody>{rows}</tbody></table></body></html>")


def serve(pages):
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = pages.get(self.path.split("?")[0])
            if body is None:
                self.send_response(404)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv.server_address[1]


class Client:
    def __init__(self, argv, env):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env, text=True, bufsize=1)
        self.id = 0
        self.req("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "bench", "version": "0"}})
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        # As Codex does: our server starts its warm-up (the redaction patterns a
        # first call's result and log line need) once the tools are listed.
        self.req("tools/list", {})

    def req(self, method, params):
        self.id += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}) + "\n")
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("server exited")
            m = json.loads(line)
            if m.get("id") == self.id:
                if "error" in m:
                    raise RuntimeError(m["error"])
                return m["result"]

    def tool(self, name, args):
        r = self.req("tools/call", {"name": name, "arguments": args})
        text = "".join(c.get("text", "") for c in r.get("content", []) if c.get("type") == "text")
        if r.get("isError"):
            raise RuntimeError(f"{name}: {text[:300]}")
        return text

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=20)
        except Exception:
            self.p.kill()




def ours_snapshot_text(text):
    return json.loads(unwrap_untrusted(text))["snapshot"]


def ours_untruncated_chars(snap):
    """Length of the whole snapshot: the stored copy when the answer was cut."""
    if 'full snapshot: read_file path="' in snap:
        path = snap.split('read_file path="', 1)[1].split('"', 1)[0]
        return len(open(path, encoding="utf-8").read())
    return len(snap)


def first_navigate(argv, env, url):
    """Seconds from a fresh server's start to its first browser_navigate's answer."""
    c = Client(argv, env)
    t0 = time.perf_counter()
    c.tool("browser_navigate", {"url": url})
    t = time.perf_counter() - t0
    c.close()
    return t


def cold(argv, env, url, runs):
    """Median first browser_navigate of `runs` fresh servers; one more start
    before them is not counted (it brings the files into the page cache)."""
    times = [first_navigate(argv, env, url) for _ in range(runs + 1)]
    return statistics.median(times[1:])


def warm(c, url, runs):
    """Median of `runs` browser_navigate + browser_snapshot to `url`, and the last snapshot's text."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        c.tool("browser_navigate", {"url": url})
        s = c.tool("browser_snapshot", {})
        times.append(time.perf_counter() - t0)
    return statistics.median(times), s


def sizes(kind, c, s):
    """The snapshot's sizes: its characters; for ours also the untruncated and the full snapshot's."""
    if kind != "ours":
        return {"snapshot_chars": len(s)}
    return {"snapshot_chars": len(ours_snapshot_text(s)),
            "untruncated_chars": ours_untruncated_chars(ours_snapshot_text(s)),
            "full_snapshot_chars": len(ours_snapshot_text(c.tool("browser_snapshot", {"full": True})))}


def run(kind, argv, env, urls, runs, cold_runs):
    res = {"cold_first_navigate_s": cold(argv, env, urls["simple"], cold_runs)}
    c = Client(argv, env)
    c.tool("browser_navigate", {"url": urls["simple"]})
    for page, url in urls.items():
        t, s = warm(c, url, runs)
        res[page] = {"warm_nav_snapshot_s": t, **sizes(kind, c, s)}
    c.close()
    return res


# Between two interleaved navigations: the time a side's work after its
# answer (a renderer tearing down, a Node server's garbage collection) has to
# finish, so that it is not counted in the other side's next navigation.
SETTLE_S = 0.05


def run_interleaved(sides, urls, runs, cold_runs, rng):
    """`run` for two servers at once, {name: (kind, argv, env)}: the cold starts
    alternate between them and, with both servers up, so do the warm
    navigations (one navigate+snapshot each, SETTLE_S apart), in an order
    drawn from `rng` each round, so that a change in the machine's speed
    during the run falls on both sides alike. Each side's first start is not
    counted, as in `cold`."""
    res = {n: {} for n in sides}
    cold_times = {n: [] for n in sides}
    for i in range(cold_runs + 1):
        for n in rng.sample(list(sides), len(sides)):
            kind, argv, env = sides[n]
            t = first_navigate(argv, env, urls["simple"])
            if i:
                cold_times[n].append(t)
    clients = {}
    for n, (kind, argv, env) in sides.items():
        res[n]["cold_first_navigate_s"] = statistics.median(cold_times[n])
        clients[n] = Client(argv, env)
        clients[n].tool("browser_navigate", {"url": urls["simple"]})
    for page, url in urls.items():
        times = {n: [] for n in sides}
        last = {}
        for _ in range(runs):
            for n in rng.sample(list(sides), len(sides)):
                time.sleep(SETTLE_S)
                t, last[n] = warm(clients[n], url, 1)
                times[n].append(t)
        for n, (kind, _, _) in sides.items():
            res[n][page] = {"warm_nav_snapshot_s": statistics.median(times[n]), **sizes(kind, clients[n], last[n])}
    for c in clients.values():
        c.close()
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "hermes-mcp"))
    ap.add_argument("--playwright", default="/tmp/pwmcp")
    ap.add_argument("--baseline-bin", help="compare with another hermes-mcp build instead of Playwright")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--interleave", action="store_true",
                    help="both servers up at once, their cold starts and warm navigations alternating")
    ap.add_argument("--seed", type=int, default=0, help="the interleaved order's random seed")
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--article", default="wikipedia")
    ap.add_argument("--corpus", default=CORPUS, help="readability pages folder")
    a = ap.parse_args()
    article = open(os.path.join(a.corpus, a.article, "source.html"), "rb").read()
    pages = {
        "/simple.html": open(os.path.join(FIXTURES, "form.html"), "rb").read(),
        "/big.html": big_page().encode(),
        "/table.html": table_page().encode(),
        "/article.html": article,
    }
    port = serve(pages)
    urls = {
        "simple": f"http://127.0.0.1:{port}/simple.html",
        "big": f"http://127.0.0.1:{port}/big.html",
        "table": f"http://127.0.0.1:{port}/table.html",
        "article": f"http://127.0.0.1:{port}/article.html",
    }
    tmp = tempfile.mkdtemp(prefix="bench-browser-")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "HERMES_HOME": os.path.join(tmp, "hermes")}
    os.makedirs(env["HERMES_HOME"], exist_ok=True)
    sides = {"ours": ("ours", [a.bin, "serve"], env)}
    if a.baseline_bin:
        base_name = "baseline"
        sides["base"] = ("ours", [a.baseline_bin, "serve"], env)
    else:
        base_name = "playwright"
        cli = os.path.join(a.playwright, "node_modules", "@playwright", "mcp", "cli.js")
        sides["base"] = ("playwright", ["node", cli, "--headless", "--isolated", "--executable-path",
                                        "/usr/bin/chromium", "--no-sandbox", "--output-dir",
                                        os.path.join(tmp, "pw-out")], dict(env))
    if a.interleave:
        both = run_interleaved(sides, urls, a.runs, a.cold_runs, random.Random(a.seed))
        ours, pw = both["ours"], both["base"]
    else:
        ours = run(*sides["ours"], urls, a.runs, a.cold_runs)
        pw = run(*sides["base"], urls, a.runs, a.cold_runs)
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'':28}{'hermes-mcp':>14}{base_name:>14}{'ratio':>9}")
    print(f"{'cold first navigate (s)':28}{ours['cold_first_navigate_s']:>14.3f}{pw['cold_first_navigate_s']:>14.3f}"
          f"{ours['cold_first_navigate_s'] / pw['cold_first_navigate_s']:>9.2f}")
    for page in urls:
        o, p = ours[page], pw[page]
        print(f"{page + ' warm nav+snapshot (s)':28}{o['warm_nav_snapshot_s']:>14.3f}{p['warm_nav_snapshot_s']:>14.3f}"
              f"{o['warm_nav_snapshot_s'] / p['warm_nav_snapshot_s']:>9.2f}")
        print(f"{page + ' snapshot chars':28}{o['snapshot_chars']:>14}{p['snapshot_chars']:>14}"
              f"{o['snapshot_chars'] / p['snapshot_chars']:>9.2f}")
        print(f"{page + ' untruncated chars':28}{o['untruncated_chars']:>14}{p['snapshot_chars']:>14}"
              f"{o['untruncated_chars'] / p['snapshot_chars']:>9.2f}")
        print(f"{page + ' full snapshot chars':28}{o['full_snapshot_chars']:>14}{'':>14}"
              f"{o['full_snapshot_chars'] / p['snapshot_chars']:>9.2f}")
    print(json.dumps({"hermes_mcp": ours, "playwright": pw}, indent=1), file=sys.stderr)


if __name__ == "__main__":
    main()
