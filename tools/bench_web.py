#!/usr/bin/env python3
"""Benchmark web_extract's built-in extractor against mcp-server-fetch and trafilatura.

Servers are driven the same way: as stdio MCP servers, one tools/call per page,
pages served from a loopback HTTP server. trafilatura (the library, `extract()`
with its evaluation settings) runs in-process on the same bytes. Measured in
the same run, per corpus and per part of the set: pages per second
(extraction calls only, start-up excluded) and F1.

Corpora (each read from a directory outside the repo; nothing is committed):
  readability  Mozilla Readability's test pages: DIR/pages/<name>/{source,expected}.html.
               Score: token F1 of the text against the text of expected.html.
               Default DIR: ../shared/corpora/readability, /work/shared/corpora/readability.
  scrapinghub  github.com/scrapinghub/article-extraction-benchmark (a checkout):
               DIR/html/<id>.html.gz + DIR/ground-truth.json (articleBody).
               Score: token F1 of the text against articleBody.
  trafilatura  github.com/adbar/trafilatura (a checkout, tests/ is enough):
               DIR/tests/evaldata.json + DIR/tests/{cache,eval}/<file>.
               Score: trafilatura's own: per page, the "with" snippets found (tp)
               and "without" snippets found (fp); F1 from the summed tp/fp/fn.
               trafilatura was developed against this set: its own figure there
               is not a held-out one.
  The default DIR of scrapinghub and trafilatura is $XDG_CACHE_HOME (~/.cache)
  /hermes-mcp/bench-web/<name>; get them with
    git clone https://github.com/scrapinghub/article-extraction-benchmark ~/.cache/hermes-mcp/bench-web/scrapinghub
    git clone https://github.com/adbar/trafilatura ~/.cache/hermes-mcp/bench-web/trafilatura
  (or pass --corpus NAME=DIR). A corpus that is absent is reported and skipped;
  --require makes that an error.

Tuning / held-out split (fixed, written down here, never to be tuned on):
  a page is HELD-OUT when int(sha256("<corpus>/<page name>").hexdigest()[:8], 16) % 3 == 0,
  else TUNE. Page names: readability the directory name, scrapinghub the id,
  trafilatura the evaldata "file". Develop heuristics with --part tune only.
  The headline "held-out F1" is the mean of the corpora's held-out F1.

mcp-server-fetch runs Readability.js in node for every page (seconds a page),
so it runs on a fixed sample of the selected pages (--fetch-every K: pages with
int(sha256(...).hexdigest()[8:16], 16) % K == 0; K=1 is all); its F1 and its
speed ratio are reported against hermes-mcp's on the same pages.

Text comparison: Markdown is reduced to its text for every tool alike (link
and image targets dropped, emphasis/heading/list/table/escape marks removed).

Usage:
  tools/bench_web.py [--corpus NAME=DIR ...] [--only-corpus readability,scrapinghub]
                     [--part tune|held-out|all] [--servers hermes-mcp,mcp-server-fetch,trafilatura]
                     [--bin target/release/hermes-mcp] [--baseline-bin OLD_BINARY] [--fetch-venv tools/.venv-bench]
                     [--rounds 1] [--dump DIR] [--only NAMES] [--worst 8]

mcp-server-fetch and trafilatura are installed into --fetch-venv on first use
(`python3 -m venv` + `pip install mcp-server-fetch trafilatura`); mcp-server-fetch
runs with --allow-private-ips (the pages are on loopback) and --ignore-robots-txt
(we do not fetch robots.txt either, so both do one HTTP request per page).
"""

import argparse
import gzip
import hashlib
import html.parser
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from untrusted import unwrap_untrusted  # tools/untrusted.py

REPO = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hermes-mcp" / "bench-web"


# ---------------------------------------------------------------------------
# Split
# ---------------------------------------------------------------------------

def part_of(corpus, name):
    h = int(hashlib.sha256(f"{corpus}/{name}".encode()).hexdigest()[:8], 16)
    return "held-out" if h % 3 == 0 else "tune"


def in_sample(corpus, name, every):
    """mcp-server-fetch's sample (it takes seconds a page): a fixed 1/every of each part."""
    return int(hashlib.sha256(f"{corpus}/{name}".encode()).hexdigest()[8:16], 16) % every == 0


# ---------------------------------------------------------------------------
# Text and scores
# ---------------------------------------------------------------------------

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


IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
LINK_TARGET = re.compile(r"\]\((?:[^()\s]|\([^)]*\))*(?:\s+\"[^\"]*\")?\)")
REF_DEF = re.compile(r"(?m)^\s*\[[^\]]+\]:\s+\S+.*$")
MARKS = re.compile(r"(?m)^\s{0,3}(?:#{1,6}\s+|>\s?|[-*+]\s+|\d+[.)]\s+)|\*\*|__|`+|\\(?=[^\w\s])|^\s*\|?(?:\s*:?-{3,}:?\s*\|)+\s*$")


def md_text(s):
    """The text of Markdown: targets dropped, formatting marks removed."""
    s = IMAGE.sub(lambda m: m.group(1), s)
    s = LINK_TARGET.sub("]", s)
    s = REF_DEF.sub("", s)
    s = s.replace("[", "").replace("]", "")
    s = MARKS.sub("", s)
    s = s.replace("|", " ")
    return s


def tokens(s):
    return Counter(t.lower() for t in re.split(r"[^\w]+", s, flags=re.UNICODE) if t and t != "_")


def token_f1(got, want):
    g, w = tokens(got), tokens(want)
    gn, wn = sum(g.values()), sum(w.values())
    if gn == 0 or wn == 0:
        return 1.0 if gn == wn else 0.0
    common = sum((g & w).values())
    if common == 0:
        return 0.0
    p, r = common / gn, common / wn
    return 2 * p * r / (p + r)


def norm_ws(s):
    return re.sub(r"\s+", " ", s).strip()


def snippet_counts(item, text):
    """trafilatura's count_item: (tp, fp, fn, tn) by whitespace-normalised substring."""
    t = norm_ws(text)
    tp = sum(1 for w in item["with"] if norm_ws(w) in t)
    fp = sum(1 for w in item["without"] if norm_ws(w) in t)
    return tp, fp, len(item["with"]) - tp, len(item["without"]) - fp


def f1_of_counts(counts):
    tp = sum(c[0] for c in counts)
    fp = sum(c[1] for c in counts)
    fn = sum(c[2] for c in counts)
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return 2 * p * r / (p + r) if p + r else 0.0


# ---------------------------------------------------------------------------
# Corpora
# ---------------------------------------------------------------------------

class Page:
    __slots__ = ("corpus", "name", "part", "load", "truth")

    def __init__(self, corpus, name, load, truth):
        self.corpus, self.name, self.load, self.truth = corpus, name, load, truth
        self.part = part_of(corpus, name)


class Corpus:
    """name, pages, and how a page's text is scored (`page_score`, `aggregate`)."""

    kind = "token"  # "token": mean of per-page token F1; "snippet": F1 of summed counts

    def __init__(self, name, root):
        self.name, self.root = name, root

    def page_score(self, page, text):
        if self.kind == "snippet":
            return snippet_counts(page.truth(), text)
        return token_f1(text, page.truth())

    def aggregate(self, scores):
        if not scores:
            return float("nan")
        if self.kind == "snippet":
            return f1_of_counts(scores)
        return sum(scores) / len(scores)

    def page_f1(self, score):
        """One page's F1 (for the worst-page list)."""
        if self.kind == "snippet":
            return f1_of_counts([score]) if score[0] + score[1] + score[2] else 1.0
        return score


class Readability(Corpus):
    @staticmethod
    def present(root):
        return (root / "pages").is_dir()

    def pages(self):
        out = []
        for d in sorted((self.root / "pages").iterdir()):
            if (d / "source.html").exists() and (d / "expected.html").exists():
                out.append(Page(self.name, d.name, (lambda d=d: (d / "source.html").read_bytes()),
                                (lambda d=d: html_text((d / "expected.html").read_text(errors="replace")))))
        return out


class Scrapinghub(Corpus):
    @staticmethod
    def present(root):
        return (root / "ground-truth.json").is_file() and (root / "html").is_dir()

    def pages(self):
        truth = json.loads((self.root / "ground-truth.json").read_text())
        out = []
        for key in sorted(truth):
            f = self.root / "html" / f"{key}.html.gz"
            if f.exists():
                body = truth[key].get("articleBody", "")
                out.append(Page(self.name, key, (lambda f=f: gzip.decompress(f.read_bytes())),
                                (lambda body=body: body)))
        return out


class Trafilatura(Corpus):
    kind = "snippet"

    @staticmethod
    def present(root):
        return (root / "tests" / "evaldata.json").is_file()

    def pages(self):
        data = json.loads((self.root / "tests" / "evaldata.json").read_text())
        out, seen = [], set()
        for url in sorted(data):
            item = data[url]
            fname = item.get("file")
            if not fname or fname in seen or not item.get("with"):
                continue
            f = next((self.root / "tests" / sub / fname for sub in ("cache", "eval")
                      if (self.root / "tests" / sub / fname).is_file()), None)
            if f is None:
                continue
            seen.add(fname)
            out.append(Page(self.name, fname, (lambda f=f: f.read_bytes()), (lambda item=item: item)))
        return out


ADAPTERS = {"readability": Readability, "scrapinghub": Scrapinghub, "trafilatura": Trafilatura}


def default_dirs(name):
    if name == "readability":
        return [REPO.parent / "shared" / "corpora" / "readability", Path("/work/shared/corpora/readability"),
                CACHE / "readability"]
    return [CACHE / name]


def find_corpora(args):
    given = {}
    for spec in args.corpus or []:
        if "=" not in spec:
            sys.exit(f"error: --corpus takes NAME=DIR (NAME one of {', '.join(ADAPTERS)}), got {spec!r}")
        n, d = spec.split("=", 1)
        if n not in ADAPTERS:
            sys.exit(f"error: unknown corpus {n!r}; known: {', '.join(ADAPTERS)}")
        given[n] = [Path(d)]
    wanted = args.only_corpus.split(",") if args.only_corpus else list(ADAPTERS)
    out = []
    for n in wanted:
        if n not in ADAPTERS:
            sys.exit(f"error: unknown corpus {n!r}; known: {', '.join(ADAPTERS)}")
        cands = given.get(n) or default_dirs(n)
        root = next((c for c in cands if ADAPTERS[n].present(c)), None)
        if root is None:
            msg = f"corpus {n} not found (looked in: {', '.join(map(str, cands))}); see --help for its layout"
            if args.require:
                sys.exit("error: " + msg)
            print("skipped: " + msg, file=sys.stderr)
            continue
        out.append(ADAPTERS[n](n, root))
    if not out:
        sys.exit("error: no corpus available; see --help")
    return out


# ---------------------------------------------------------------------------
# Extractors
# ---------------------------------------------------------------------------

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


def ensure_venv(venv):
    exe = venv / "bin" / "mcp-server-fetch"
    py = venv / "bin" / "python"
    ok = exe.exists() and subprocess.run([str(py), "-c", "import trafilatura"],
                                         capture_output=True).returncode == 0
    if not ok:
        print(f"installing mcp-server-fetch and trafilatura into {venv} ...", file=sys.stderr)
        if not py.exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        # lxml 6 moved lxml.html.clean, which trafilatura imports, into its own package.
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "mcp-server-fetch", "trafilatura",
                        "lxml_html_clean"], check=True)
    # readabilipy, mcp-server-fetch's extractor, runs `npm install` for its JavaScript on
    # every call until its node_modules exist; in the loopback-only namespace each such
    # call waits minutes. Install them once, here.
    js = subprocess.run([str(py), "-c", "import os, readabilipy; print(os.path.join("
                         "os.path.dirname(readabilipy.__file__), 'javascript'))"],
                        capture_output=True, text=True).stdout.strip()
    if js and shutil.which("npm") and not os.path.isdir(os.path.join(js, "node_modules")):
        print(f"npm install in {js} (readabilipy) ...", file=sys.stderr)
        try:
            npm_ok = subprocess.run(["npm", "install", "--silent"], cwd=js, timeout=300).returncode == 0
        except subprocess.TimeoutExpired:
            npm_ok = False
        if not npm_ok:
            print("warning: readabilipy's JavaScript is not installed (no network here?): "
                  "mcp-server-fetch will try `npm install` on every call and its speed is not "
                  f"its own; run `npm install` in {js} with the network first", file=sys.stderr)
    return exe, py


TRAFILATURA_WORKER = r"""
import json, sys, time
from trafilatura import extract
out = sys.stdout
for line in sys.stdin:
    path = json.loads(line)
    data = open(path, "rb").read()
    t0 = time.perf_counter()
    try:
        text = extract(data, include_comments=False, include_tables=True, include_formatting=False) or ""
    except Exception:
        text = ""
    out.write(json.dumps({"text": text, "dt": time.perf_counter() - t0}) + "\n")
    out.flush()
"""


def version_of(py, pkg):
    r = subprocess.run([str(py), "-c", f"import importlib.metadata as m; print(m.version({pkg!r}))"],
                       capture_output=True, text=True)
    return r.stdout.strip() or "?"


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", action="append", metavar="NAME=DIR")
    ap.add_argument("--only-corpus", help="comma-separated corpus names")
    ap.add_argument("--require", action="store_true", help="a missing corpus is an error")
    ap.add_argument("--part", choices=["tune", "held-out", "all"], default="all")
    ap.add_argument("--servers", default="hermes-mcp,mcp-server-fetch,trafilatura")
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "hermes-mcp"))
    ap.add_argument("--baseline-bin", help="another hermes-mcp build, measured as hermes-mcp@base")
    ap.add_argument("--fetch-venv", default=str(REPO / "tools" / ".venv-bench"))
    ap.add_argument("--rounds", type=int, default=1, help="rounds of hermes-mcp (speed); others run once")
    ap.add_argument("--dump", help="write each tool's text per page into this directory")
    ap.add_argument("--only", help="comma-separated page names")
    ap.add_argument("--fetch-every", type=int, default=20, help="mcp-server-fetch's sample: 1/K of the pages")
    ap.add_argument("--worst", type=int, default=8, help="worst pages of hermes-mcp to list per corpus")
    a = ap.parse_args()

    corpora = find_corpora(a)
    servers = [s for s in a.servers.split(",") if s]
    if a.baseline_bin:
        servers.insert(1, "hermes-mcp@base")
    if "hermes-mcp" in servers and not Path(a.bin).exists():
        sys.exit(f"error: {a.bin} not found\nhint: cargo build --release (or pass --bin)")
    fetch_exe = py = None
    if "mcp-server-fetch" in servers or "trafilatura" in servers:
        fetch_exe, py = ensure_venv(Path(a.fetch_venv))

    pages = []
    for c in corpora:
        for p in c.pages():
            if a.part != "all" and p.part != a.part:
                continue
            if a.only and p.name not in a.only.split(","):
                continue
            pages.append((c, p))
    if not pages:
        sys.exit("error: no page selected")
    by_key = {f"{c.name}/{p.name}": p for c, p in pages}
    # a page's bytes, under a file name of its key (scrapinghub's are gzipped)
    file_of = lambda key: serve_dir / hashlib.sha1(key.encode()).hexdigest()
    sample = [(c, p) for c, p in pages if in_sample(c.name, p.name, max(1, a.fetch_every))] or pages[:1]
    serve_dir = Path(tempfile.mkdtemp(prefix="bench-web-pages-"))
    for key, p in by_key.items():
        file_of(key).write_bytes(p.load())

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            f = serve_dir / self.path.strip("/").split("/")[0]
            if not f.is_file():
                self.send_error(404)
                return
            body = f.read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    url_of = lambda key: f"{base}/{file_of(key).name}/"

    home = tempfile.mkdtemp(prefix="bench-hermes-")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "HERMES_HOME": home,
           "HERMES_ALLOW_PRIVATE_URLS": "1"}
    hermes_extract = lambda c, url: json.loads(unwrap_untrusted(
        c.call("web_extract", {"urls": [url], "char_limit": 500000})))["results"][0].get("content") or ""
    mcp_servers = {
        "hermes-mcp": (lambda: Mcp([a.bin, "serve"], env), hermes_extract, a.rounds),
        "hermes-mcp@base": (lambda: Mcp([a.baseline_bin, "serve"], env), hermes_extract, a.rounds),
        "mcp-server-fetch": (
            lambda: Mcp([str(fetch_exe), "--allow-private-ips", "--ignore-robots-txt"],
                        {"PATH": os.environ.get("PATH", ""), "HOME": home}),
            lambda c, url: re.sub(r"^Contents of \S+:\n", "", c.call("fetch", {"url": url, "max_length": 999999})),
            1,
        ),
    }

    texts = {}   # tool -> key -> text
    page_t = {}  # tool -> key -> seconds (one round)
    for tool in servers:
        texts[tool], page_t[tool] = {}, Counter()
        if tool == "trafilatura":
            w = subprocess.Popen([str(py), "-c", TRAFILATURA_WORKER], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True, bufsize=1)
            for c, p in pages:
                key = f"{c.name}/{p.name}"
                w.stdin.write(json.dumps(str(file_of(key))) + "\n")
                w.stdin.flush()
                r = json.loads(w.stdout.readline())
                texts[tool][key] = r["text"]
                page_t[tool][key] += r["dt"]
            w.stdin.close()
            w.wait()
            continue
        start, extract, rounds = mcp_servers[tool]
        todo = sample if tool == "mcp-server-fetch" else pages
        conn = start()
        extract(conn, url_of(f"{todo[0][0].name}/{todo[0][1].name}"))  # warm-up
        for _ in range(rounds):
            for c, p in todo:
                key = f"{c.name}/{p.name}"
                t0 = time.perf_counter()
                try:
                    texts[tool][key] = extract(conn, url_of(key))
                except RuntimeError as e:
                    print(f"{tool}: {key}: {e}", file=sys.stderr)
                    texts[tool][key] = ""
                    conn = start()
                page_t[tool][key] += (time.perf_counter() - t0) / rounds
        conn.close()
        print(f"{tool}: done", file=sys.stderr)
    srv.shutdown()

    if a.dump:
        for tool, t in texts.items():
            for key, s in t.items():
                f = Path(a.dump) / tool / f"{key}.md"
                f.parent.mkdir(parents=True, exist_ok=True)
                f.write_text(s)

    # scores
    scores = {tool: {} for tool in servers}
    for tool in servers:
        for c, p in (sample if tool == "mcp-server-fetch" else pages):
            key = f"{c.name}/{p.name}"
            raw = texts[tool][key]
            scores[tool][key] = c.page_score(p, raw if tool == "trafilatura" else md_text(raw))

    parts = ["tune", "held-out"] if a.part == "all" else [a.part]
    versions = {"trafilatura": version_of(py, "trafilatura") if py else "",
                "mcp-server-fetch": version_of(py, "mcp-server-fetch") if py else ""}
    fetch_on = "mcp-server-fetch" in servers
    cols = [t for t in servers if t != "mcp-server-fetch"]  # on every page
    scols = ["hermes-mcp", "mcp-server-fetch"] if fetch_on and "hermes-mcp" in servers else (
        ["mcp-server-fetch"] if fetch_on else [])  # on mcp-server-fetch's sample
    print(f"bench_web: {len(pages)} pages (mcp-server-fetch: a sample of {len(sample)}, --fetch-every "
          f"{a.fetch_every}); hermes-mcp x{a.rounds} rounds, others x1; loopback, sequential calls")
    print("  " + ", ".join(f"{t} {versions[t]}" for t in servers if versions.get(t)))
    print("  F1: readability/scrapinghub mean token F1; trafilatura snippet F1 (summed counts)")
    head = [f"{t:>16}" for t in cols] + [f"{(t + '@sample'):>24}" for t in scols]
    print(f"{'corpus':<12} {'part':<9} {'pages':>5} {'sample':>6}  " + "  ".join(head))
    headline = {pt: {t: [] for t in cols + [x + "@s" for x in scols]} for pt in parts}
    for c in corpora:
        for pt in parts:
            sel = [p for cc, p in pages if cc is c and p.part == pt]
            ssel = [p for cc, p in sample if cc is c and p.part == pt]
            if not sel:
                continue
            row = []
            for t in cols:
                v = c.aggregate([scores[t][f"{c.name}/{p.name}"] for p in sel])
                headline[pt][t].append(v)
                row.append(f"{v:>16.3f}")
            for t in scols:
                v = c.aggregate([scores[t][f"{c.name}/{p.name}"] for p in ssel])
                if ssel:
                    headline[pt][t + "@s"].append(v)
                row.append(f"{v:>24.3f}")
            print(f"{c.name:<12} {pt:<9} {len(sel):>5} {len(ssel):>6}  " + "  ".join(row))
    for pt in parts:
        vals = list(headline[pt].values())
        print(f"{'MEAN':<12} {pt:<9} {'':>5} {'':>6}  " + "  ".join(
            (f"{sum(v) / len(v):>16.3f}" if v else f"{'-':>16}") if k in cols else
            (f"{sum(v) / len(v):>24.3f}" if v else f"{'-':>24}") for k, v in headline[pt].items()))
    rate = lambda t, sel: len(sel) / sum(page_t[t][f"{c.name}/{p.name}"] for c, p in sel)
    print(f"{'speed':<12} {'pages/s':<9} {'':>5} {'':>6}  " + "  ".join(
        [f"{rate(t, pages):>16.1f}" for t in cols] + [f"{rate(t, sample):>24.2f}" for t in scols]))
    if "hermes-mcp" in servers:
        if fetch_on:
            print(f"speed ratio hermes-mcp / mcp-server-fetch (same {len(sample)} pages): "
                  f"{rate('hermes-mcp', sample) / rate('mcp-server-fetch', sample):.0f}x")
        if "trafilatura" in servers:
            print(f"speed ratio hermes-mcp / trafilatura (all pages; trafilatura in-process, no HTTP/MCP): "
                  f"{rate('hermes-mcp', pages) / rate('trafilatura', pages):.1f}x")
        for c in corpora:
            sel = [p for cc, p in pages if cc is c and p.part == "tune"]  # never held-out pages
            worst = sorted(sel, key=lambda p: c.page_f1(scores["hermes-mcp"][f"{c.name}/{p.name}"]))[: a.worst]
            if worst:
                print(f"worst tune pages of {c.name} (" + " / ".join(cols) + "):")
            for p in worst:
                key = f"{c.name}/{p.name}"
                print(f"  {p.name[:60]:<60} " + " ".join(f"{c.page_f1(scores[t][key]):.3f}" for t in cols))


if __name__ == "__main__":
    main()
