#!/usr/bin/env python3
"""Benchmark: hermes-mcp's warm browser_navigate + browser_snapshot against the
same DevTools commands sent straight to Chromium, same run.

How much of a warm navigation is ours? The floor here is a client that sends,
on one CDP websocket and without our request-checking proxy, Fetch pause or MCP,
exactly the commands our server sends for `tools/bench_browser.py`'s warm loop:
  * the liveness probe (`Runtime.evaluate "1"`), then `Page.navigate`;
  * the wait for `Page.loadEventFired`;
  * the walker (`snapshot.js`, sent the way `session/walk.rs` sends it) beside
    `Page.getNavigationHistory`, and its JSON read;
  * browser_snapshot's liveness probe beside its check that the page did not
    change (`UNCHANGED_JS`).
Chromium runs with our flags, read from `src/toolsets/browser/chromium/launch.rs`
(each flag a `"--...",` line of CHROMIUM_FLAGS, as it is written there).
Pages: bench_browser.py's `simple` and `big`. Each figure is the median of --runs.

Usage (loopback-only namespace, as the other browser benchmarks):
  unshare -n sh -c 'ip link set lo up && exec "$@"' sh \\
    /opt/hermes-venv/bin/python tools/bench_cdp_floor.py [--bin target/release/hermes-mcp] [--runs 9]
Needs the `websockets` package (Hermes' venv has it).
"""

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import websockets

import bench_browser as bb  # tools/bench_browser.py: pages, HTTP server, MCP client

SRC = os.path.join(bb.ROOT, "src", "toolsets", "browser")


def chromium_flags():
    """CHROMIUM_FLAGS and DISABLE_FEATURES as launch.rs spells them."""
    src = open(os.path.join(SRC, "chromium", "launch.rs"), encoding="utf-8").read()
    feats = src.split("const DISABLE_FEATURES: &str = concat!(")[1].split(");")[0]
    disable = "".join(re.findall(r'"([^"]*)"', feats))
    body = src.split("pub const CHROMIUM_FLAGS: &[&str] = &[")[1].split("];")[0]
    flags = [f for f in re.findall(r'^\s*"(--[^"]*)",', body, re.M)]
    assert disable.startswith("--disable-features=") and len(flags) > 10, "launch.rs changed shape"
    return flags + [disable, "--no-startup-window"]


def walker_call():
    """snapshot.js as walk.rs sends it: comment lines and indentation dropped."""
    src = open(os.path.join(SRC, "snapshot", "snapshot.js"), encoding="utf-8").read()
    js = "\n".join(line.strip() for line in src.splitlines() if line.strip() and not line.strip().startswith("//"))
    return f"({js.rstrip(';')})({{urls:false}})"


def unchanged_js():
    src = open(os.path.join(SRC, "tools", "snapshot_tool.rs"), encoding="utf-8").read()
    return src.split('const UNCHANGED_JS: &str = "')[1].split('";\n')[0].replace('\\"', '"')


async def floor(ws_url, urls, runs):
    walk, unchanged = walker_call(), unchanged_js()
    async with websockets.connect(ws_url, max_size=None) as ws:
        waiters, events, n = {}, asyncio.Queue(), 0

        async def reader():
            async for raw in ws:
                m = json.loads(raw)
                if "id" in m:
                    waiters.pop(m["id"]).set_result(m)
                else:
                    await events.put(m)

        async def call(method, params=None, sid=None):
            nonlocal n
            n += 1
            fut = asyncio.get_running_loop().create_future()
            waiters[n] = fut
            msg = {"id": n, "method": method, "params": params or {}}
            if sid:
                msg["sessionId"] = sid
            await ws.send(json.dumps(msg))
            r = await fut
            if "error" in r:
                raise RuntimeError(f"{method}: {r['error']}")
            return r["result"]

        task = asyncio.create_task(reader())
        target = await call("Target.createTarget", {"url": "about:blank"})
        sid = (await call("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}))["sessionId"]
        await call("Page.enable", sid=sid)
        await call("Runtime.enable", sid=sid)
        await call("Page.navigate", {"url": urls["simple"]}, sid=sid)
        while (await events.get()).get("method") != "Page.loadEventFired":
            pass
        res = {}
        for page, url in urls.items():
            times = []
            for _ in range(runs):
                while not events.empty():
                    events.get_nowait()
                t0 = time.perf_counter()
                await call("Runtime.evaluate", {"expression": "1", "returnByValue": True}, sid)
                await call("Page.navigate", {"url": url}, sid)
                while (await events.get()).get("method") != "Page.loadEventFired":
                    pass
                r, _ = await asyncio.gather(
                    call("Runtime.evaluate", {"expression": walk, "returnByValue": True, "objectGroup": "hermes"}, sid),
                    call("Page.getNavigationHistory", {}, sid))
                json.loads(r["result"]["value"])
                await asyncio.gather(
                    call("Runtime.evaluate", {"expression": "1", "returnByValue": True}, sid),
                    call("Runtime.evaluate", {"expression": unchanged, "returnByValue": True}, sid))
                times.append(time.perf_counter() - t0)
            res[page] = statistics.median(times)
        task.cancel()
        return res


def run_floor(urls, runs, chromium):
    profile = tempfile.mkdtemp(prefix="bench-cdp-floor-")
    p = subprocess.Popen([chromium, "--headless=new", "--remote-debugging-port=0", f"--user-data-dir={profile}",
                          *chromium_flags()], stderr=subprocess.PIPE, text=True)
    try:
        for line in p.stderr:
            if "DevTools listening on" in line:
                ws_url = line.split(" on ", 1)[1].strip()
                break
        else:
            raise RuntimeError("Chromium did not print its DevTools endpoint")
        return asyncio.run(floor(ws_url, urls, runs))
    finally:
        p.kill()
        p.wait()
        shutil.rmtree(profile, ignore_errors=True)


def run_ours(binary, urls, runs):
    tmp = tempfile.mkdtemp(prefix="bench-cdp-floor-")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "HERMES_HOME": os.path.join(tmp, "hermes")}
    os.makedirs(env["HERMES_HOME"])
    c = bb.Client([binary, "serve"], env)
    c.tool("browser_navigate", {"url": urls["simple"]})
    res = {page: bb.warm(c, url, runs)[0] for page, url in urls.items()}
    c.close()
    shutil.rmtree(tmp, ignore_errors=True)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(bb.ROOT, "target", "release", "hermes-mcp"))
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    a = ap.parse_args()
    port = bb.serve({"/simple.html": open(os.path.join(bb.FIXTURES, "form.html"), "rb").read(),
                     "/big.html": bb.big_page().encode()})
    urls = {"simple": f"http://127.0.0.1:{port}/simple.html", "big": f"http://127.0.0.1:{port}/big.html"}
    ours = run_ours(a.bin, urls, a.runs)
    raw = run_floor(urls, a.runs, a.chromium)
    print(f"{'warm nav+snapshot (s)':28}{'hermes-mcp':>12}{'raw CDP':>12}{'ratio':>8}")
    for page in urls:
        print(f"{page:28}{ours[page]:>12.3f}{raw[page]:>12.3f}{ours[page] / raw[page]:>8.2f}")


if __name__ == "__main__":
    sys.exit(main())
