#!/usr/bin/env python3
"""Start-up time and memory of `hermes-mcp serve` against a minimal rmcp server, in one run.

The baseline is `tools/minimal-rmcp` (the smallest stdio server rmcp makes, with the rmcp
version and features and the tokio runtime hermes-mcp uses; built here unless --minimal is
given). Measured, runs interleaved so that machine load falls on all alike (with
--baseline, the two hermes-mcp builds take turns going first: `in_turn`):

* spawn -> `initialize` answered: the minimal server; `serve` on a bare Hermes home; `serve`
  on a realistic home (300 skills in 12 categories, full MEMORY.md and USER.md, a kanban
  board, a state.db of 300 sessions filled through Hermes' own SessionDB), whose
  `instructions` carry Hermes' context (skills index, memory snapshot, guidance; their size
  is reported). Medians, and the ratio to the minimal server (goal, issue #31: <= 2x).
* peak RSS (the kernel's high-water mark of the server's memory, VmHWM) of a short session: `initialize`,
  `tools/list`, `skills_list`, `session_search`, `memory` add then remove (the home is left
  as it was) and, where offered, `kanban_list`, then end of input; on both homes, and the
  minimal server's `initialize` + `tools/list` for scale (goal: <= 15 MiB). Medians. The
  calls come at once after the tool list, while `serve`'s warm-up still runs beside them
  (the worst case); measured again with a model's turn between the tool list and the first
  call (--turn-ms, 500 as in tools/bench_firstcall.py: what Codex does). Also
  how much of the binary's code is resident at the session's end (smaps of its executable
  mappings): the part the release link's text order (build.rs) keeps small.
* the binary: size, relative relocations (work the dynamic loader does at every start),
  `--version` wall time against `true`, and its minor page faults.

With --baseline (an earlier hermes-mcp build, e.g. of the main branch), its figures are
measured in the same runs and compared too.

The memory figures depend on how the binaries came into the page cache. After
`echo 3 > /proc/sys/vm/drop_caches` they come in through their own page faults, a part at a
time. With --read-binaries each binary is first read through once, as an install or a copy
leaves it: the whole file cached, and each page a session touches is then mapped with the
cached pages around it (the kernel's fault-around), so more of the binary can be resident,
the more so the more scattered what a session runs is (README's Benchmarks table has both).

Run with Hermes' Python (it fills the state.db and the kanban board through hermes-agent):
    cargo build --release
    /opt/hermes-venv/bin/python tools/bench_startup.py [--baseline OLD/hermes-mcp] [--json]

Options: --current (default $CARGO_TARGET_DIR or target/, release/hermes-mcp), --minimal
(default: built into the same target dir), --runs (--version runs per binary), --init-runs
(serve runs per binary and home), --rss-runs (sessions per binary and home), --turn-ms (the
model's turn before the first call in the second kind of session), --read-binaries (above).
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_sessions import state_db  # tools/bench_sessions.py

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = ROOT / "tools/minimal-rmcp"
SESSIONS = 300
INIT = {"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "codex-mcp-client", "version": "0.169.0"}}
KANBAN = """
import os, sys
from hermes_cli import kanban_db as kb
kb.init_db()
conn = kb.connect()
for i in range(int(sys.argv[1])):
    kb.create_task(conn, title=f"task {i}", body="Details of the task. " * 8,
                   assignee=f"worker-{i % 4}", created_by="bench", priority=i % 3)
conn.close()
"""


def target_dir():
    return Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")


def build_minimal():
    """Build tools/minimal-rmcp (offline, release) into the target dir; its binary."""
    subprocess.run(["cargo", "build", "--offline", "--release", "--quiet", "--manifest-path",
                    str(MINIMAL / "Cargo.toml"), "--target-dir", str(target_dir())], check=True)
    return str(target_dir() / "release/minimal-rmcp")


def relocations(path):
    """Relative relocations in the binary (`readelf -r`), or None without readelf."""
    try:
        out = subprocess.run(["readelf", "-r", "-W", path], capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return sum(1 for line in out.splitlines() if "R_X86_64_RELATIVE" in line
               or "R_AARCH64_RELATIVE" in line)


def exec_run(argv):
    """Wall time (ms) and minor page faults of one run of `argv`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
    ms = (time.perf_counter() - t0) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ms, after.ru_minflt - before.ru_minflt


def hermes_python():
    return os.environ.get("HERMES_PYTHON") or sys.executable


def realistic_home(root, skills=300):
    """A Hermes home with `skills` skills in 12 categories, full memory files, a kanban
    board of 50 tasks and a state.db of SESSIONS sessions."""
    home = Path(root, "realistic")
    for i in range(skills):
        d = home / "skills" / f"cat-{i % 12}" / f"skill-{i:03}"
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(
            f"---\nname: skill-{i:03}\ndescription: What skill {i} does, in a line of about sixty "
            f"chars\n---\n# Skill {i}\n\nSteps.\n", encoding="utf-8")
    mem = home / "memories"
    mem.mkdir()
    (mem / "MEMORY.md").write_text(
        "\n§\n".join(f"Fact {i}: the project builds with make" for i in range(50)), encoding="utf-8")
    (mem / "USER.md").write_text("\n§\n".join(f"User preference {i}" for i in range(40)),
                                 encoding="utf-8")
    (home / "config.yaml").write_text("toolsets:\n  - hermes-cli\n  - kanban\n", encoding="utf-8")
    shutil.copy(state_db(SESSIONS, hermes_python()), home / "state.db")
    subprocess.run([hermes_python(), "-c", KANBAN, "50"], check=True, stdout=subprocess.DEVNULL,
                   env=dict(os.environ, HERMES_HOME=str(home)))
    return home


class Session:
    """One server process spoken to as Codex does, over stdio."""

    def __init__(self, argv, env):
        self.t0 = time.perf_counter()
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env)
        self.id = 0

    def req(self, method, params):
        self.id += 1
        msg = {"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError(f"{self.p.args[0]} exited during {method}")
            answer = json.loads(line)
            if answer.get("id") == self.id:
                return answer

    def initialize(self):
        """ms from spawn to the answer, and the answer's instructions' length."""
        r = self.req("initialize", INIT)
        ms = (time.perf_counter() - self.t0) * 1000
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        self.p.stdin.write((json.dumps(note) + "\n").encode())
        return ms, len((r.get("result") or {}).get("instructions") or "")

    def call(self, name, args):
        r = self.req("tools/call", {"name": name, "arguments": args})
        if "result" not in r:
            raise RuntimeError(f"{name}: {json.dumps(r)[:300]}")

    def wait_idle(self):
        if not wait_idle(self.p.pid, 0.1, 5):
            print(f"warning: {self.p.args[0]} was still busy after 5 s; its peak is read anyway",
                  file=sys.stderr)

    def end(self, code=False):
        """Close stdin and reap the process: its peak RSS in MiB, and with `code` the MiB of
        its binary's code resident at the end (else None).

        The peak is the kernel's high-water mark of the server's own address space
        (/proc/PID/status VmHWM, read after the last answer). Not wait4's ru_maxrss: Linux
        carries the forking parent's peak into the child across exec, and this Python, with
        hermes-agent imported, is far bigger than the server.

        `serve` warms what first calls build on a background thread once the tool list is
        out; a session this short can end before that warm-up does, which would leave its
        memory out of the peak. So the peak is read once the server is idle: its CPU time
        (/proc/PID/stat) has not moved over 100 ms (at most 5 s)."""
        self.wait_idle()
        with open(f"/proc/{self.p.pid}/status", encoding="ascii") as f:
            hwm_kib = next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))
        code_mib = code_resident_kib(self.p.pid, self.p.args[0]) / 1024 if code else None
        self.p.stdin.close()
        _, status, _ = os.wait4(self.p.pid, 0)
        self.p.returncode = os.waitstatus_to_exitcode(status)
        return hwm_kib / 1024, code_mib


def cpu_ticks(pid):
    """User + system CPU ticks of process `pid` so far (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


def wait_idle(pid, still_s, limit_s):
    """Wait until process `pid` has used no CPU for `still_s` (its warm-up is done); False
    when it was still busy after `limit_s`."""
    deadline = time.monotonic() + limit_s
    last, since = cpu_ticks(pid), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.01)
        now = cpu_ticks(pid)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= still_s:
            return True
    return False


def code_resident_kib(pid, binary):
    """KiB of the binary's own code (its executable mappings) resident in process `pid`:
    the part of the peak that the release link's text order (build.rs) reduces."""
    real, kib, in_code = os.path.realpath(binary), 0, False
    with open(f"/proc/{pid}/smaps", encoding="utf-8", errors="replace") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
                in_code = len(head) > 5 and head[5] == real and "x" in head[1]
            elif in_code and head[0] == "Rss:":
                kib += int(head[1])
    return kib


def init_run(argv, env):
    s = Session(argv, env)
    ms, chars = s.initialize()
    s.end()
    return ms, chars


def short_session(argv, env, hermes, turn_s=0.0, after_list=None):
    """Peak RSS (MiB) of initialize, tools/list and, for hermes-mcp, `turn_s` later, a few
    calls, and the MiB of the binary's code resident at its end. `after_list(session)` runs
    between the tool list and the calls (tools/text_order.py marks the warm-up's end)."""
    s = Session(argv, env)
    s.initialize()
    tools = {t["name"] for t in s.req("tools/list", {})["result"]["tools"]}
    if after_list:
        after_list(s)
    if hermes:
        time.sleep(turn_s)
        s.call("skills_list", {})
        s.call("session_search", {"query": "auth deploy"})
        entry = "The benchmark entry: user prefers tabs over spaces."
        s.call("memory", {"action": "add", "target": "memory", "content": entry})
        s.call("memory", {"action": "remove", "target": "memory", "old_text": entry})
        if "kanban_list" in tools:
            s.call("kanban_list", {})
    return s.end(code=hermes)


def in_turn(bins, i):
    """The binaries in round `i`'s order: reversed every other round, so that neither runs
    always right after the minimal server or always right after the other's heavier
    realistic-home run. In one order only, one program given as both binaries came out with
    its first copy's bare `initialize` 0.09 and 0.32 ms slower than its second's (two runs
    of 100); alternating, 0.03 ms."""
    order = list(bins.items())
    return order[::-1] if i % 2 else order


def med(xs):
    return round(statistics.median(xs), 2) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--current", default=str(target_dir() / "release/hermes-mcp"))
    ap.add_argument("--baseline", help="an earlier hermes-mcp build, compared too")
    ap.add_argument("--minimal", help="the minimal rmcp server (default: built here)")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--init-runs", type=int, default=40)
    ap.add_argument("--rss-runs", type=int, default=5)
    ap.add_argument("--turn-ms", type=float, default=500)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--read-binaries", action="store_true",
                    help="read each binary through once first (the whole file in the page cache)")
    a = ap.parse_args()
    bins = {"current": a.current}
    if a.baseline:
        bins["baseline"] = a.baseline
    for name, path in bins.items():
        if not os.access(path, os.X_OK):
            sys.exit(f"{name} binary {path} is not executable: build it first (see --help)")
    minimal = a.minimal or build_minimal()
    if a.read_binaries:
        # cat: large sequential reads, as cp and installers make them
        subprocess.run(["cat", minimal, *bins.values()], stdout=subprocess.DEVNULL, check=True)
    tmp = tempfile.mkdtemp(prefix="bench-startup-")
    bare = Path(tmp, "bare")
    bare.mkdir()
    real = realistic_home(tmp)
    base_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "TZ": "UTC"}
    homes = {"bare": dict(base_env, HERMES_HOME=str(bare)),
             "realistic": dict(base_env, HERMES_HOME=str(real))}

    res = {"minimal": {"size_mib": round(os.path.getsize(minimal) / 2**20, 2),
                       "relocations": relocations(minimal), "init_ms": [], "rss_mib": []}}
    for n, p in bins.items():
        res[n] = {"size_mib": round(os.path.getsize(p) / 2**20, 2), "relocations": relocations(p),
                  "version_ms": [], "version_minflt": []}
        for h in homes:
            res[n].update({f"init_{h}_ms": [], f"rss_{h}_mib": [], f"code_{h}_mib": [],
                           f"rss_turn_{h}_mib": [], f"instructions_{h}_chars": 0})
    true_ms = []
    for i in range(a.runs):
        true_ms.append(exec_run(["true"])[0])
        for n, p in in_turn(bins, i):
            ms, flt = exec_run([p, "--version"])
            res[n]["version_ms"].append(ms)
            res[n]["version_minflt"].append(flt)
    for i in range(a.init_runs):
        res["minimal"]["init_ms"].append(init_run([minimal], base_env)[0])
        for n, p in in_turn(bins, i):
            for h, env in homes.items():
                ms, chars = init_run([p, "serve"], env)
                res[n][f"init_{h}_ms"].append(ms)
                res[n][f"instructions_{h}_chars"] = chars
    for i in range(a.rss_runs):
        res["minimal"]["rss_mib"].append(short_session([minimal], base_env, False)[0])
        for n, p in in_turn(bins, i):
            for h, env in homes.items():
                peak, code = short_session([p, "serve"], env, True)
                res[n][f"rss_{h}_mib"].append(peak)
                res[n][f"code_{h}_mib"].append(code)
                peak, _ = short_session([p, "serve"], env, True, a.turn_ms / 1000)
                res[n][f"rss_turn_{h}_mib"].append(peak)

    summary = {k: {m: (med(v) if isinstance(v, list) else v) for m, v in r.items()}
               for k, r in res.items()}
    summary["true"] = {"exec_ms": med(true_ms)}
    mini = summary["minimal"]["init_ms"]
    ratios = {}
    for n in bins:
        s = summary[n]
        ratios[n] = {f"init_{h}_over_minimal": round(s[f"init_{h}_ms"] / mini, 2) for h in homes}
        ratios[n]["version_over_true"] = round(s["version_ms"] / summary["true"]["exec_ms"], 2)
    if a.json:
        print(json.dumps({"summary": summary, "ratios": ratios}, indent=2))
        return
    cols = ["minimal"] + list(bins)
    print(f"{'':30}" + "".join(f"{c:>12}" for c in cols))
    rows = [("size MiB", "size_mib", "size_mib"), ("relative relocations", "relocations", "relocations"),
            ("--version ms", None, "version_ms"), ("--version minor faults", None, "version_minflt"),
            ("initialize ms, bare home", "init_ms", "init_bare_ms"),
            ("initialize ms, realistic home", "init_ms", "init_realistic_ms"),
            ("instructions chars, bare", None, "instructions_bare_chars"),
            ("instructions chars, realistic", None, "instructions_realistic_chars"),
            ("peak RSS MiB, bare home", "rss_mib", "rss_bare_mib"),
            ("peak RSS MiB, realistic home", "rss_mib", "rss_realistic_mib"),
            ("  of it binary code, bare", None, "code_bare_mib"),
            ("  of it binary code, realistic", None, "code_realistic_mib"),
            (f"  {a.turn_ms:g} ms turn first, bare", None, "rss_turn_bare_mib"),
            (f"  {a.turn_ms:g} ms turn first, realistic", None, "rss_turn_realistic_mib")]
    for label, mk, hk in rows:
        cells = [summary["minimal"].get(mk) if mk else None] + [summary[n].get(hk) for n in bins]
        print(f"{label:30}" + "".join(f"{'-' if c is None else c!s:>12}" for c in cells))
    print(f"`true` exec ms: {summary['true']['exec_ms']}")
    for n in bins:
        print(f"{n}: " + ", ".join(f"{k} {v}" for k, v in ratios[n].items()))
    print(f"({a.runs} exec runs, {a.init_runs} initialize runs and {a.rss_runs} sessions of each "
          f"kind per binary and home, interleaved; medians. 'turn first': the model's turn "
          f"between tools/list and the first call. Minimal RSS: initialize + tools/list only)")


if __name__ == "__main__":
    main()
