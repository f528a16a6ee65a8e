#!/usr/bin/env python3
"""Drive the real codex binary offline against hermes-mcp (Python 3.9+ stdlib only).

One run:
  1. starts a loopback mock of the OpenAI Responses API (SSE) in this process;
  2. writes a throw-away CODEX_HOME/config.toml (mock model provider, plugins off) and then
     runs OUR `hermes-mcp migrate` on it, so the hermes-tools entry is exactly what users get
     (no `required = true`);
  3. runs `codex exec --json "CALL <tool> <json-args>"` (or one turn through `codex app-server`,
     answering the MCP approval elicitation), and the mock makes the model call
     `mcp__hermes_tools.<tool>`;
  4. prints one JSON summary on stdout (what every /responses request offered, the tool call
     item codex recorded, what the model got back, the final agent message).

    python3 tools/codex_e2e.py --tool skills_list --args '{}'
    python3 tools/codex_e2e.py --tool skill_view --args '{"name":"x"}' --via appserver
    python3 tools/codex_e2e.py --tool kanban_complete --args '{"summary":"done"}' \
        --env HERMES_KANBAN_TASK=t_1 --env HERMES_KANBAN_RUN_ID=1

Options: --bin (hermes-mcp; default target/debug/hermes-mcp), --codex (default `codex` on PATH),
--hermes-home DIR (default: a fresh empty one), --env K=V (repeatable; exported to migrate and codex: migrate
lists a variable set when it runs in env_vars, and only then does codex pass it to the server), --root DIR (scratch; default
~/.cache/hermes-mcp-e2e: codex refuses helper binaries under /tmp), --keep (keep the run dir), --namespace mcp__<server> (call another migrated server's tool).
Exit status: 0 when codex ran the tool and the final message quotes its output, 1 otherwise,
2 on a setup error (codex or the binary missing).
"""
import argparse
import itertools
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAMESPACE = "mcp__hermes_tools"  # codex sanitises the server key hermes-tools to this


# --------------------------------------------------------------------------- mock Responses API
class Mock:
    def __init__(self):
        self.requests = []  # (path, body) of every request
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_GET(self):
                with mock.lock:
                    mock.requests.append({"method": "GET", "path": self.path, "body": None})
                data = b'{"object":"list","data":[],"models":[]}'
                self.send_response(200 if "models" in self.path else 404)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                n = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {"_unparsed": len(raw)}
                with mock.lock:
                    mock.requests.append({"method": "POST", "path": self.path, "body": body})
                if not self.path.rstrip("/").endswith("/responses"):
                    self.send_response(404)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                mock.respond(self, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()

    def respond(self, h, body):
        rid = f"resp_{next(self.ids)}"
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("cache-control", "no-cache")
        h.send_header("connection", "close")
        h.end_headers()

        def sse(obj):
            h.wfile.write(f"event: {obj['type']}\ndata: {json.dumps(obj)}\n\n".encode())
            h.wfile.flush()

        sse({"type": "response.created", "response": {"id": rid, "status": "in_progress"}})
        inp = body.get("input") or []
        calls = parse_calls(last_user_text(inp))
        done = sum(1 for i in inp if i.get("type") == "function_call_output")
        if done >= len(calls):
            outs = [i for i in inp if i.get("type") == "function_call_output"]
            out = outs[-1].get("output") if outs else None
            text = out if isinstance(out, str) else json.dumps(out)
            self.message(sse, rid, f"The MCP tool returned: {text}")
        else:
            tool, args = calls[done]
            if not offered(body, tool):
                self.message(sse, rid, f"mock: no tool {NAMESPACE}.{tool!r} was offered")
            else:
                call = {"type": "function_call", "id": f"fc_{rid}", "call_id": f"call_{rid}",
                        "namespace": NAMESPACE, "name": tool, "arguments": args, "status": "completed"}
                sse({"type": "response.output_item.added", "output_index": 0,
                     "item": {**call, "arguments": "", "status": "in_progress"}})
                sse({"type": "response.output_item.done", "output_index": 0, "item": call})
        sse({"type": "response.completed", "response": {
            "id": rid, "status": "completed",
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": 15}}})
        h.close_connection = True

    @staticmethod
    def message(sse, rid, text):
        msg = {"type": "message", "id": f"msg_{rid}", "role": "assistant", "status": "completed",
               "content": [{"type": "output_text", "text": text, "annotations": []}]}
        sse({"type": "response.output_item.added", "output_index": 0,
             "item": {**msg, "status": "in_progress", "content": []}})
        sse({"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
             "item_id": msg["id"], "delta": text})
        sse({"type": "response.output_item.done", "output_index": 0, "item": msg})


def last_user_text(inp):
    for item in reversed(inp):
        if item.get("type") == "message" and item.get("role") == "user":
            for c in item.get("content", []):
                if c.get("type") == "input_text":
                    return c.get("text", "")
    return ""


def parse_calls(prompt):
    """`CALL tool {json} THEN tool {json} ...` -> [(tool, args-json)]."""
    calls = []
    for part in re.split(r"\s+THEN\s+", prompt.strip()):
        m = re.match(r"(?:CALL\s+)?(\S+)\s*(\{.*\})?\s*$", part, re.S)
        if m:
            calls.append((m.group(1), m.group(2) or "{}"))
    return calls


def hermes_tools_namespace(body):
    """The hermes-tools namespace entry of one request's tools (None: codex offered none)."""
    for t in body.get("tools") or []:
        if t.get("type") == "namespace" and t.get("name") == NAMESPACE:
            return t
    return None


def hermes_tools_offered(body):
    """Tool names codex offered in the hermes-tools namespace of one request (None: no namespace)."""
    ns = hermes_tools_namespace(body)
    return None if ns is None else [s.get("name") for s in ns.get("tools", [])]


def hermes_tools_description(body):
    """The description codex gave the hermes-tools namespace in one request (the server's
    MCP `instructions`), or None."""
    ns = hermes_tools_namespace(body)
    return None if ns is None else ns.get("description")


def offered(body, tool):
    return tool in (hermes_tools_offered(body) or [])


# --------------------------------------------------------------------------- the run
USER_CONFIG = """# written by tools/codex_e2e.py: a mock model on loopback, nothing needs a login
model = "mock-model"
model_provider = "mock"
approval_policy = "{approval}"

[model_providers.mock]
name = "Mock"
base_url = "http://127.0.0.1:{port}/v1"
wire_api = "responses"

[features]
plugins = false

[analytics]
enabled = false

[otel]
metrics_exporter = "none"
"""


def codex_env(codex_home, home, extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "CODEX_API_KEY", "RUST_BACKTRACE", "RUST_LOG", "CODEX_HOME")
           and not k.startswith("HERMES_")}
    env.update(extra)
    env["CODEX_HOME"] = str(codex_home)
    env["HOME"] = str(home)
    return env


def run_exec(codex, prompt, env, cwd, timeout):
    cmd = [codex, "exec", "--skip-git-repo-check", "--json", prompt]
    p = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=timeout)
    events = []
    for line in p.stdout.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            pass
    call = final = None
    for ev in events:
        item = ev.get("item") or {}
        if ev.get("type") == "item.completed" and item.get("type") == "mcp_tool_call":
            call = item
        if ev.get("type") == "item.completed" and item.get("type") == "agent_message":
            final = item.get("text")
    return {"returncode": p.returncode, "stderr": p.stderr[-4000:], "events": events,
            "tool_call": call, "final_message": final}


def run_appserver(codex, prompt, env, cwd, timeout, persist=None):
    """One turn through `codex app-server`; answers mcpServer/elicitation/request with accept
    (with `_meta.persist` = `persist` when given: "always" is the app's "Always allow")."""
    p = subprocess.Popen([codex, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, bufsize=1, env=env, cwd=cwd)
    q = queue.Queue()
    threading.Thread(target=lambda: [q.put(l) for l in p.stdout] + [q.put(None)], daemon=True).start()
    elicitations, messages = [], []

    def send(obj):
        p.stdin.write(json.dumps(obj) + "\n")
        p.stdin.flush()

    def pump(until, deadline):
        while time.monotonic() < deadline:
            try:
                line = q.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                return None
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            method = msg.get("method", "")
            if not method.endswith("/delta"):
                messages.append(msg)
            if "id" in msg and method:
                if method == "mcpServer/elicitation/request":
                    elicitations.append(msg.get("params"))
                    meta = {"persist": persist} if persist else None
                    send({"id": msg["id"], "result": {"action": "accept", "content": None, "_meta": meta}})
                elif method.endswith("requestApproval"):
                    send({"id": msg["id"], "result": {"decision": "accept"}})
                else:
                    send({"id": msg["id"], "error": {"code": -32601, "message": f"unhandled {method}"}})
                continue
            if until(msg):
                return msg
        return None

    deadline = time.monotonic() + timeout
    ok = False
    try:
        send({"id": 1, "method": "initialize", "params": {
            "clientInfo": {"name": "hermes_mcp_e2e", "title": "hermes-mcp e2e", "version": "0"},
            "capabilities": {"experimentalApi": True}}})
        pump(lambda m: m.get("id") == 1, deadline)
        send({"method": "initialized"})
        send({"id": 2, "method": "thread/start", "params": {
            "cwd": str(cwd), "approvalPolicy": "on-request", "sandbox": "read-only"}})
        r = pump(lambda m: m.get("id") == 2, deadline)
        tid = r["result"]["thread"]["id"]
        send({"id": 3, "method": "turn/start", "params": {
            "threadId": tid, "input": [{"type": "text", "text": prompt, "text_elements": []}]}})
        ok = pump(lambda m: m.get("method") == "turn/completed", deadline) is not None
    finally:
        try:
            p.stdin.close()
            p.wait(timeout=10)
        except Exception:
            p.kill()
    call = final = None
    for m in messages:
        item = (m.get("params") or {}).get("item") or {}
        if m.get("method") == "item/completed" and item.get("type") == "mcpToolCall":
            call = item
        if m.get("method") == "item/completed" and item.get("type") == "agentMessage":
            final = item.get("text")
    return {"returncode": 0 if ok else 1, "stderr": p.stderr.read()[-4000:] if p.stderr else "",
            "tool_call": call, "final_message": final, "elicitations": elicitations}


def main():
    global NAMESPACE
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tool", required=True)
    ap.add_argument("--args", default="{}")
    ap.add_argument("--then", nargs=2, action="append", default=[], metavar=("TOOL", "ARGS"),
                    help="another call in the same turn, after the previous one returned (repeatable)")
    ap.add_argument("--via", choices=["exec", "appserver"], default="exec")
    ap.add_argument("--persist", choices=["session", "always"],
                    help="with --via appserver: answer the approval elicitation with this `persist`")
    ap.add_argument("--bin", default=str(ROOT / "target" / "debug" / "hermes-mcp"))
    ap.add_argument("--codex", default=os.environ.get("CODEX") or shutil.which("codex"))
    ap.add_argument("--hermes-home")
    ap.add_argument("--env", action="append", default=[], metavar="K=V")
    ap.add_argument("--root", default=str(Path.home() / ".cache" / "hermes-mcp-e2e"))
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--namespace", default=NAMESPACE,
                    help="the namespace the model calls (mcp__<server>; default mcp__hermes_tools)")
    a = ap.parse_args()
    NAMESPACE = a.namespace

    if not a.codex or not Path(a.codex).exists() and not shutil.which(a.codex):
        print("codex not found: install it with `npm install --prefix /opt/codex-0.171.0 @openai/codex@0.171.0` "
              "(tools/test.sh does) or pass --codex", file=sys.stderr)
        return 2
    binary = Path(a.bin).resolve()
    if not binary.exists():
        print(f"hermes-mcp binary not found at {binary}: run `cargo build` or pass --bin", file=sys.stderr)
        return 2
    extra = dict(kv.split("=", 1) for kv in a.env)

    root = Path(a.root)
    root.mkdir(parents=True, exist_ok=True)
    run = Path(tempfileless_dir(root))
    codex_home, home, work = run / "codex_home", run / "home", run / "work"
    for d in (codex_home, home, work):
        d.mkdir(parents=True)
    hermes_home = Path(a.hermes_home) if a.hermes_home else run / "hermes_home"
    hermes_home.mkdir(parents=True, exist_ok=True)

    mock = Mock()
    summary = {"run_dir": str(run)}
    try:
        approval = "on-request" if a.via == "appserver" else "never"
        (codex_home / "config.toml").write_text(USER_CONFIG.format(port=mock.port, approval=approval))
        mig = subprocess.run([str(binary), "migrate", "--codex-home", str(codex_home),
                              "--hermes-home", str(hermes_home), "--no-plugins", "--json"],
                             env=codex_env(codex_home, home, extra), capture_output=True, text=True, timeout=60)
        summary["migrate"] = {"returncode": mig.returncode, "stderr": mig.stderr[-2000:]}
        if mig.returncode != 0:
            summary["error"] = "hermes-mcp migrate failed"
            print(json.dumps(summary))
            return 1
        summary["config_toml"] = (codex_home / "config.toml").read_text()

        prompt = " THEN ".join([f"CALL {a.tool} {a.args}"] + [f"{t} {x}" for t, x in a.then])
        env = codex_env(codex_home, home, extra)
        t0 = time.monotonic()
        if a.via == "appserver":
            summary.update(run_appserver(a.codex, prompt, env, work, a.timeout, a.persist))
        else:
            summary.update(run_exec(a.codex, prompt, env, work, a.timeout))
        summary["config_toml_after"] = (codex_home / "config.toml").read_text()
        summary["seconds"] = round(time.monotonic() - t0, 3)
    finally:
        mock.close()

    posts = [r for r in mock.requests if r["method"] == "POST"]
    summary["requests"] = [{"path": r["path"], "hermes_tools": hermes_tools_offered(r["body"] or {}),
                            "hermes_tools_description": hermes_tools_description(r["body"] or {})}
                           for r in posts]
    last = posts[-1]["body"] if len(posts) > 1 else {}
    outputs = [i.get("output") for i in (last.get("input") or []) if i.get("type") == "function_call_output"]
    summary["function_call_outputs"] = outputs  # what the model received, call by call
    summary["function_call_output"] = outputs[-1] if outputs else None
    summary.pop("events", None)
    final = summary.get("final_message") or ""
    summary["ok"] = (summary.get("returncode") == 0 and summary.get("tool_call") is not None
                     and final.startswith("The MCP tool returned:"))
    print(json.dumps(summary))
    if not a.keep and summary["ok"]:
        shutil.rmtree(run, ignore_errors=True)
    return 0 if summary["ok"] else 1


def tempfileless_dir(root):
    return root / f"run-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{next(_counter)}"


_counter = itertools.count()

if __name__ == "__main__":
    sys.exit(main())
