"""A fork server for Hermes' Python in the test suite: the oracle runs start warm.

Why: most of the suite's CPU was Hermes' Python importing the same third-party packages
again in every one of ~200 short processes (`import openai` alone is ~1.7 s of CPU on the
CI machine: pydantic builds its models at import). `tools/test.sh` starts one server that
has imported them once; each run of Hermes' Python in the suite is then a `fork()` of it,
which runs the same `-c`/`-m`/script, with the caller's argv, environment, working
directory and stdin/stdout/stderr, in a fresh child process. Hermes' own modules are not
imported ahead: some read `HERMES_HOME` and the like when they load.

    python3 pyzygote.py wrap PYTHON CMD...   run CMD with HERMES_PYTHON set to a shim that
                                            forks PYTHON's server (what tools/test.sh does)
    PYTHON pyzygote.py serve SOCKET          the server

The client falls back to `exec PYTHON ARGS...` whenever the server is not there or the
run is not one a fork reproduces exactly: interpreter options, a terminal on stdio,
start-up state other than the server's (`start_state`: `PYTHON*` variables, the locale's
character type, what preloaded packages read as they load), a module beside the script
named like a preloaded one, a missing script. Exit codes and deaths by signal are passed
back; a client that is killed takes its child with it, and so does a server that ends.
"""

import functools
import json
import os
import signal
import socket
import struct
import sys

# Imported once in the server, in this order. Third-party libraries only: none of them
# reads homes, keys or base URLs while it loads; what some do read is in READ_AT_IMPORT.
PRELOAD = (
    "asyncio", "concurrent.futures", "json", "sqlite3", "ssl", "email.parser",
    "pydantic", "httpx", "requests", "yaml", "openai", "anthropic", "aiohttp",
    "jsonschema", "mcp", "mcp.server.fastmcp", "edge_tts", "PIL.Image", "dotenv",
    "psutil", "jinja2",
)
PRELOAD_TOP = frozenset(n.split(".")[0] for n in PRELOAD)
# Start-up variables that a running interpreter takes on in `become` (a run with any other
# `PYTHON*` variable runs the plain way).
APPLIED_AFTER_START = ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE")


# Set (to anything) in a run's environment: the run fails instead of running the plain
# interpreter, so that `selfcheck` cannot pass by comparing the plain interpreter with itself.
REQUIRE_FORK = "PYZYGOTE_REQUIRE_FORK"

# For measuring: a file that gets one line per forked run, [CPU seconds, its arguments].
STATS = os.environ.get("PYZYGOTE_STATS")
conn_args = {}


# Read by preloaded packages as they load: openai and anthropic set their loggers. aiohttp
# builds its default SSL context at import too, from SSL_CERT_FILE/DIR: those are compared by
# the files they name (default_certs), not by their text.
READ_AT_IMPORT = ("OPENAI_LOG", "ANTHROPIC_LOG")


@functools.cache
def default_certs():
    """OpenSSL's default bundle and directory, by the variables that override them."""
    import ssl

    d = ssl.get_default_verify_paths()
    return {"SSL_CERT_FILE": d.openssl_cafile, "SSL_CERT_DIR": d.openssl_capath}


def start_state(env):
    """What of `env` an interpreter fixes when it starts and cannot change afterwards: the
    `PYTHON*` variables it does not take on later, those the preloaded packages read as
    they load, and the character type its stdio and file names use (PEP 538: a C or POSIX
    locale without LC_ALL becomes C.UTF-8)."""
    python = {
        k: v
        for k, v in env.items()
        if (k.startswith("PYTHON") and k not in APPLIED_AFTER_START)
        or k in READ_AT_IMPORT
    }
    # The certificates: unset and set to OpenSSL's default load the same ones.
    for var, fallback in default_certs().items():
        python[var] = os.path.realpath(env.get(var) or fallback)
    ctype = next((env[k] for k in ("LC_ALL", "LC_CTYPE", "LANG") if env.get(k)), "C")
    if ctype in ("C", "POSIX") and not env.get("LC_ALL"):
        ctype = "C.UTF-8"
    return {"python": python, "ctype": ctype}


def send_msg(sock, obj, fds=()):
    data = json.dumps(obj).encode()
    msg = struct.pack("!I", len(data)) + data
    if fds:
        socket.send_fds(sock, [msg], list(fds))
    else:
        sock.sendall(msg)


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def recv_msg(sock):
    head = recv_exact(sock, 4)
    if head is None:
        return None
    data = recv_exact(sock, struct.unpack("!I", head)[0])
    return None if data is None else json.loads(data)


# ---------------------------------------------------------------- client


def client(sock_path, python, args):
    def plain(why):
        if os.environ.get(REQUIRE_FORK):
            sys.exit(f"pyzygote: this run would not be forked: {why} ({REQUIRE_FORK} is set)")
        os.execv(python, [python, *args])

    if not args or (args[0].startswith("-") and args[0] not in ("-c", "-m")):
        plain("interpreter options")
    if args[0] in ("-c", "-m") and len(args) < 2:
        plain(f"{args[0]} without its argument")
    if any(os.isatty(fd) for fd in (0, 1, 2)):
        plain("a terminal on stdio")
    req = {"args": args, "env": dict(os.environ), "pgid": os.getpgrp()}
    try:
        req["cwd"] = os.getcwd()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(sock_path)
        send_msg(sock, req, fds=(0, 1, 2))  # the header and the descriptors: one message
    except OSError as e:
        plain(f"no fork server: {e}")  # nothing was started
    try:
        first = recv_msg(sock)
    except (OSError, ValueError):
        first = None
    if first is not None and first.get("plain"):
        plain("the server says a fork would not be this run")
    if first is None or "pid" not in first:
        # The server took the request and ended without an answer: it may have forked a
        # run already, so running it again here could run the code twice.
        sys.exit("pyzygote: the fork server ended before it said whether it ran this")
    pid = first["pid"]
    done = False

    def forward(sig, _frame):
        if not done:
            try:
                os.kill(pid, sig)
            except OSError:
                pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, forward)
    try:
        end = recv_msg(sock)
    except (OSError, ValueError):
        end = None
    done = True
    if end is None:
        # The server is gone: its child must not outlive this run.
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        sys.exit("pyzygote: the fork server ended during this run")
    if "signal" in end:
        try:
            signal.signal(end["signal"], signal.SIG_DFL)
        except (OSError, ValueError):
            pass  # SIGKILL, SIGSTOP
        os.kill(os.getpid(), end["signal"])
    sys.exit(end.get("exit", 1))


# ---------------------------------------------------------------- server


def serve(sock_path):
    import gc
    import importlib
    import selectors

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception as e:  # noqa: BLE001 - a package Hermes lacks is simply not preloaded
            print(f"pyzygote: not preloading {name}: {e}", file=sys.stderr)
    # What is loaded now is never collected: a child's collections and exit then leave
    # these pages alone instead of copying them (the gc.freeze() recipe for fork servers).
    gc.collect()
    gc.freeze()
    my_start = start_state(os.environ)
    try:
        os.unlink(sock_path)
    except FileNotFoundError:
        pass
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lsock.bind(sock_path)
    lsock.listen(256)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sel = selectors.DefaultSelector()
    sel.register(lsock, selectors.EVENT_READ, "listen")
    sel.register(wake_r, selectors.EVENT_READ, "wake")
    children = {}  # pid -> connection
    conns = {}  # connection -> pid

    def start(conn):
        """A new client: answer `plain`, or fork its run. The job, in the child."""
        job = accept(conn, my_start)
        if job is None or job == "plain":
            if job == "plain":
                send_msg(conn, {"plain": True})
            conn.close()
            return None
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            signal.set_wakeup_fd(-1)
            sel.close()
            lsock.close()
            os.close(wake_r)
            os.close(wake_w)
            for c in conns:
                c.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            conn.close()
            return job
        for fd in job["fds"]:
            os.close(fd)
        children[pid] = conn
        conns[conn] = pid
        if STATS:
            conn_args[conn] = [a[:80] for a in job["args"][:2]]
        try:
            send_msg(conn, {"pid": pid})
            sel.register(conn, selectors.EVENT_READ, "conn")
        except OSError:
            os.kill(pid, signal.SIGKILL)  # its client is gone; reap() collects it
        return None

    def gone(conn):
        # A client never writes after its request: readable means it is gone.
        if conn.fileno() == -1:
            return  # reaped (and closed) earlier in this round
        try:
            sel.unregister(conn)
        except (KeyError, ValueError):
            pass
        pid = conns.get(conn)
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    print(f"pyzygote: ready on {sock_path}", file=sys.stderr, flush=True)
    while True:
        for key, _ in sel.select():
            try:
                if key.data == "listen":
                    conn, _ = lsock.accept()
                    job = start(conn)
                    if job is not None:
                        return job  # in the forked child
                elif key.data == "wake":
                    os.read(wake_r, 4096)
                    reap(children, conns, sel)
                else:
                    gone(key.fileobj)
            except Exception as e:  # noqa: BLE001 - one bad client must not end the server
                print(f"pyzygote: {e!r}", file=sys.stderr, flush=True)


def accept(conn, my_start):
    """The request on `conn` with the caller's descriptors, "plain" when the run must be
    the plain interpreter's, None when the request is broken (its descriptors closed)."""
    fds = []
    try:
        conn.settimeout(2)
        msg, fds, _flags, _addr = socket.recv_fds(conn, 1 << 22, 3)
        if len(msg) < 4 or len(fds) != 3:
            raise ValueError("a request without its header or descriptors")
        n = struct.unpack("!I", msg[:4])[0]
        rest = recv_exact(conn, max(n - len(msg) + 4, 0))
        if rest is None:
            raise ValueError("a request cut short")
        req = json.loads(msg[4:] + rest)
        conn.settimeout(None)
        plain = start_state(req["env"]) != my_start or shadowed(req)
    except (OSError, ValueError, KeyError, TypeError):
        plain = None
    if plain is False:
        req["fds"] = fds
        return req
    for fd in fds:
        os.close(fd)
    return "plain" if plain else None


def path0(args, cwd):
    """The directory the plain interpreter puts first on `sys.path` for `args` run in `cwd`:
    the working directory for `-c` and `-m`, else the script's (symlinks resolved)."""
    if args[0] in ("-c", "-m"):
        return cwd
    return os.path.dirname(os.path.realpath(os.path.join(cwd, args[0])))


def shadowed(req):
    """Whether the run's first `sys.path` entry holds a module named like a preloaded one
    (the plain interpreter would import that one, a fork has the preloaded one), or its
    script is not there."""
    args = req["args"]
    if args[0] not in ("-c", "-m") and not os.path.isfile(os.path.join(req["cwd"], args[0])):
        return True  # let the interpreter say it cannot open the file, with its exit code
    first = path0(args, req["cwd"])
    return any(
        os.path.exists(os.path.join(first, n + ".py")) or os.path.isdir(os.path.join(first, n))
        for n in PRELOAD_TOP
    )


def reap(children, conns, sel):
    while True:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is None:
            continue
        if STATS:
            with open(STATS, "a") as f:
                f.write(json.dumps([usage.ru_utime + usage.ru_stime, conn_args.pop(conn, None)]) + "\n")
        conns.pop(conn, None)
        try:
            sel.unregister(conn)
        except (KeyError, ValueError):
            pass
        end = (
            {"signal": os.WTERMSIG(status)}
            if os.WIFSIGNALED(status)
            else {"exit": os.waitstatus_to_exitcode(status)}
        )
        try:
            send_msg(conn, end)
        except OSError:
            pass
        conn.close()


def fresh_stdio(unbuffered):
    """sys.stdin/stdout/stderr made for the descriptors now at 0, 1 and 2, as CPython's
    start-up makes them (`create_stdio`): buffered by the descriptor's block size, or
    unbuffered (stdout, stderr) and writing through under `-u`; else stderr and a terminal
    line-buffered; "\n"
    newlines; named "<stdin>" and so on."""
    import io

    for fd, name, write in ((0, "stdin", False), (1, "stdout", True), (2, "stderr", True)):
        old = getattr(sys, name)
        unbuffered_here = unbuffered and write
        buf = io.open(fd, "wb" if write else "rb", buffering=0 if unbuffered_here else -1, closefd=False)
        raw = buf if unbuffered_here else buf.raw
        raw.name = f"<{name}>"
        text = io.TextIOWrapper(
            buf,
            encoding=old.encoding,
            errors=old.errors,
            newline="\n",
            line_buffering=not unbuffered and (fd == 2 or raw.isatty()),
            write_through=unbuffered,
        )
        text.mode = "w" if write else "r"
        setattr(sys, name, text)
        setattr(sys, f"__{name}__", text)


def become(job):
    """In the forked child: take on the caller's process state, then run its code as
    `python ARGS...` would."""
    import runpy
    import time
    import types

    for i, fd in enumerate(job["fds"]):
        os.dup2(fd, i)
        os.close(fd)
    os.chdir(job["cwd"])
    os.environ.clear()
    os.environ.update(job["env"])
    time.tzset()
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        sys.dont_write_bytecode = True
    fresh_stdio(bool(os.environ.get("PYTHONUNBUFFERED")))
    try:
        # Into the caller's process group, where a plain run would be (a group kill of
        # the test reaches it); possible within the session the server shares.
        os.setpgid(0, job["pgid"])
    except (OSError, KeyError, TypeError):
        pass
    args = job["args"]
    if args[0] == "-c":
        sys.argv = ["-c", *args[2:]]
        sys.path[0] = ""
        main = types.ModuleType("__main__")
        main.__dict__["__builtins__"] = __builtins__
        sys.modules["__main__"] = main
        exec(compile(args[1], "<string>", "exec"), main.__dict__)
    elif args[0] == "-m":
        sys.argv = ["-m", *args[2:]]
        sys.path[0] = path0(args, os.getcwd())
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(args)
        sys.path[0] = path0(args, os.getcwd())
        runpy.run_path(args[0], run_name="__main__")


# ---------------------------------------------------------------- wrap


def wait_ready(sock_path, srv=None, seconds=60):
    """Whether the server at `sock_path` accepts connections within `seconds`."""
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end and (srv is None or srv.poll() is None):
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(sock_path)
            return True
        except OSError:
            time.sleep(0.05)
    return False


def end_with_parent():
    """In the server, before exec: SIGTERM when `wrap` goes, however it goes."""
    import ctypes

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def wrap(python, cmd):
    """Start the server for `python`, run `cmd` with HERMES_PYTHON pointing at a shim that
    uses it, stop the server; `cmd`'s exit status. Until the server is up (or if it never
    comes up) the shim runs `python` itself."""
    import shutil
    import subprocess
    import tempfile
    import threading

    here = os.path.realpath(__file__)
    d = tempfile.mkdtemp(prefix="hermes-pyzygote.")
    sock_path = os.path.join(d, "sock")
    log_path = os.path.join(d, "server.log")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "LANG", "LC_"))}
    with open(log_path, "w") as log:
        srv = subprocess.Popen(
            [python, here, "serve", sock_path],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, cwd=d,
            preexec_fn=end_with_parent,
        )
    shim_python = sys.executable  # this interpreter, started -IS: ~10 ms
    shim = os.path.join(d, "python")
    with open(shim, "w") as f:
        f.write(
            f"#!{shim_python} -IS\n"
            f"import sys\nsys.path.insert(0, {os.path.dirname(here)!r})\n"
            f"from pyzygote import client\n"
            f"client({sock_path!r}, {python!r}, sys.argv[1:])\n"
        )
    os.chmod(shim, 0o755)
    os.environ["HERMES_PYTHON"] = shim
    os.environ["HERMES_PYTHON_PLAIN"] = python
    os.environ["HERMES_PYTHON_ZYGOTE"] = sock_path

    def report():
        # `cmd` starts at once: until the server has imported its packages (a few seconds),
        # the shim runs the plain interpreter.
        if wait_ready(sock_path, srv):
            print(f"pyzygote: HERMES_PYTHON={shim} (forks of {python})", file=sys.stderr)
        else:
            with open(log_path) as f:
                print(f"pyzygote: the fork server did not start; {python} runs as it is:\n{f.read()}", file=sys.stderr)

    threading.Thread(target=report, daemon=True).start()
    try:
        proc = subprocess.Popen(cmd)
        # Ctrl-C reaches `cmd` from the terminal itself (nextest then ends its tests); a
        # SIGTERM or SIGHUP sent to this process is passed on. The server ends with us.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, lambda sig, _frame: proc.send_signal(sig))
        status = proc.wait()
    finally:
        srv.terminate()
        try:
            srv.wait(10)
        except subprocess.TimeoutExpired:
            srv.kill()
        shutil.rmtree(d, ignore_errors=True)
    return status


# ---------------------------------------------------------------- self-check

STDIO = """import sys
for n in ("stdin", "stdout", "stderr"):
    t = getattr(sys, n)
    r = getattr(t.buffer, "raw", t.buffer)
    print(n, t.encoding, t.errors, t.line_buffering, t.write_through, r.name, t.mode, type(t.buffer).__name__, t.seekable())
"""
CHECKS = [
    # (args, env, stdin): each runs through the shim and through the plain interpreter.
    (["-c", "import sys, os; print(sys.argv, repr(sys.path[0]), __name__, os.getcwd())", "a", "b"], {}, b""),
    (["-c", "import os; print(sorted(os.environ.items()))"], {"X": "1"}, b""),
    (["-c", "import os; print(sorted(os.environ.items()))"], {"LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1"}, b""),
    (["-c", "import sys; print(sys.stdin.read()[::-1])"], {}, b"hello\n"),
    (["-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"], {}, b""),
    (["-c", "import sys; sys.exit('message')"], {}, b""),
    (["-c", "raise ValueError('boom')"], {}, b""),
    (["-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"], {}, b""),
    (["-c", "import atexit, sys; atexit.register(lambda: print('at exit')); sys.stdout.write('unflushed')"], {}, b""),
    (["-c", "import sys; [print(i, file=(sys.stdout, sys.stderr)[i % 2]) for i in range(4)]"], {"PYTHONUNBUFFERED": "1"}, b""),
    (["-c", "import sys; print(sys.stdout.encoding, sys.getfilesystemencoding(), sys.dont_write_bytecode)"], {"PYTHONDONTWRITEBYTECODE": "1"}, b""),
    (["-m", "json.tool"], {}, b'{"a": [1, 2]}'),
    (["-c", STDIO], {}, b""),
    (["-c", STDIO], {"PYTHONUNBUFFERED": "1"}, b""),
    (["-c", "import threading, time; threading.Thread(target=lambda: (time.sleep(0.2), print('joined'))).start()"], {}, b""),
]


def last_line(b):
    lines = b.strip().splitlines()
    return lines[-1] if lines else b""


def selfcheck(python):
    """Every CHECKS entry gives the same exit status, stdout and last line of stderr (a
    traceback shows the server's frames above the caller's) both ways, the shim's runs all
    forked (REQUIRE_FORK); then a killed client takes its forked child with it. Exit status 0 when all hold. Uses the server of `python` this
    process runs under (`wrap` set HERMES_PYTHON to its shim), else starts one."""
    import subprocess
    import tempfile
    import time

    shim = os.environ.get("HERMES_PYTHON", python)
    if shim == python or os.environ.get("HERMES_PYTHON_PLAIN") != python:
        # No server of `python` running (e.g. under plain `cargo test`): start one for the check.
        if sys.argv[-1:] == ["--inner"]:
            print("the fork server did not start")
            return 1
        return wrap(python, [sys.executable, os.path.realpath(__file__), "selfcheck", python, "--inner"])
    if not wait_ready(os.environ["HERMES_PYTHON_ZYGOTE"]):
        print("the fork server did not start")
        return 1
    failed = 0
    # Both ways get it; the shim fails a run it would not fork.
    base = {"PATH": os.environ["PATH"], REQUIRE_FORK: "1"}
    with tempfile.TemporaryDirectory() as cwd:
        for args, env, stdin in CHECKS:
            got = []
            for py in (python, shim):
                r = subprocess.run([py, *args], input=stdin, capture_output=True, env={**base, **env}, cwd=cwd)
                got.append((r.returncode, r.stdout, last_line(r.stderr)))
            if got[0] != got[1]:
                failed += 1
                print(f"DIFFERS {args} {env}:\n  plain {got[0]}\n  forked {got[1]}")
        script = "import os, sys, time; print(os.getpid(), flush=True); time.sleep(60)"
        c = subprocess.Popen([shim, "-c", script], stdout=subprocess.PIPE, env=base)
        child = int(c.stdout.readline() or 0)
        c.kill()
        c.wait()
        if child in (0, c.pid):
            failed += 1
            print(f"the run to kill was not forked (pid {child}, client {c.pid})")
        else:
            for _ in range(200):
                try:
                    os.kill(child, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.01)
            else:
                failed += 1
                print(f"the forked child {child} outlived its killed client")
    print(f"{len(CHECKS) + 1 - failed} of {len(CHECKS) + 1} checks agree")
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1] == "selfcheck":
        sys.exit(selfcheck(sys.argv[2]))
    elif sys.argv[1] == "wrap":
        sys.exit(wrap(sys.argv[2], sys.argv[3:]))
    elif sys.argv[1] == "serve":
        job = serve(sys.argv[2])
        del sys.argv[:]
        become(job)
    else:
        sys.exit("usage: pyzygote.py wrap PYTHON CMD... | serve SOCKET")
