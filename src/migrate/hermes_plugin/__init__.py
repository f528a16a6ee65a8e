"""hermes-mcp's Hermes plugin: keep Codex's managed block current.

`hermes-mcp migrate` writes this directory to $HERMES_HOME/plugins/hermes-mcp/
and adds `hermes-mcp` to `plugins.enabled` in config.yaml (opt out with
`hermes-mcp migrate --no-hermes-hook`; remove with `hermes-mcp migrate --remove`).

Hermes' `/codex-runtime codex_app_server` re-runs Hermes' own migrator, which
rewrites the managed block of Codex's config.toml with its Python callback
server (`python -m agent.transports.hermes_tools_mcp_server`) as hermes-tools;
and a config.yaml edited after `migrate` (a new MCP server, a home that starts
using kanban) leaves the block behind. On the first turn of every new session,
before Hermes starts `codex app-server`, Hermes fires `on_session_start`; this
plugin then:

1. works out the config.toml that codex will read as Hermes starts it: Hermes
   spawns `codex app-server` with `hermes_subprocess_env()` and no CODEX_HOME of
   its own (agent/codex_runtime.py, agent/transports/codex_app_server.py), so
   codex reads $CODEX_HOME of that environment, else $HOME/.codex;
2. does nothing when that file has no managed block (nothing of hermes-mcp's
   to keep current);
3. runs `hermes-mcp migrate` again, with the options it was last run with,
   when Hermes' Python server is in the block, or when `migrate --check
   --no-plugins` (a few milliseconds, no codex spawned) says the block is stale.

The work runs in a daemon thread: session start waits for it at most
INLINE_WAIT_SECONDS (the check costs milliseconds, so a current or stale block
is settled before Hermes goes on), and a hung or slow hermes-mcp never holds
the session up longer than that; the thread finishes (or times out) on its own.
One run at a time: a session start while a run goes on adds none. As Hermes
exits, a run still going gets EXIT_WAIT_SECONDS, then its hermes-mcp is killed.

It prints nothing, and logs nothing when the block is current; what it did goes
to Hermes' log (agent.log), one record per line, each with the plugin's prefix.
It never raises into Hermes: a failure is logged and the session goes on.

Generated file: edit `src/migrate/hermes_plugin/__init__.py` in hermes-mcp instead.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import subprocess
import threading
from pathlib import Path

logger = logging.getLogger(__name__)

# Kept equal to src/migrate/hermes_plugin/mod.rs and src/migrate/block.rs (a Rust test checks).
PYTHON_SERVER_MODULE = "agent.transports.hermes_tools_mcp_server"
SERVER_NAME = "hermes-tools"
START = "# managed by hermes-agent \u2014 `hermes codex-runtime migrate` regenerates this section"
END = "# end hermes-agent managed section"
REPLACED = "Hermes' /codex-runtime replaced hermes-tools with its Python server"

SETTINGS_FILE = Path(__file__).resolve().with_name("settings.json")
MIGRATE_TIMEOUT_SECONDS = 60
CHECK_TIMEOUT_SECONDS = 20
INLINE_WAIT_SECONDS = 1.0
EXIT_WAIT_SECONDS = 1.0
PREFIX = "hermes-mcp plugin: "


def log(level: int, text: str) -> None:
    """Log `text` one record per non-empty line, each with the plugin's prefix
    (agent.log's format puts the time and logger name only on a record's first
    line, so a multi-line record would leave its continuation lines bare)."""
    for line in str(text).splitlines():
        if line.strip():
            logger.log(level, "%s%s", PREFIX, line.rstrip())


def managed_block(text: str) -> str:
    """The text of every managed block in config.toml (markers excluded).

    A start marker without an end marker runs to the end of the file.
    """
    out: list[str] = []
    inside = False
    for line in text.lstrip("\ufeff").splitlines():
        bare = line.rstrip("\r").rstrip()
        if not inside and bare == START:
            inside = True
        elif inside and bare == END:
            inside = False
        elif inside:
            out.append(line)
    return "\n".join(out) + ("\n" if out else "")


def has_block(text: str) -> bool:
    """config.toml has a managed block (hermes-mcp's or Hermes' own)."""
    return any(line.rstrip("\r").rstrip() == START for line in text.lstrip("\ufeff").splitlines())


def python_server_in_block(block: str) -> bool:
    """True when the block's hermes-tools is Hermes' Python callback server."""
    if PYTHON_SERVER_MODULE not in block:
        return False
    try:
        import tomllib

        data = tomllib.loads(block)
    except Exception:
        # A block we cannot parse on its own: the module name alone decides.
        return True
    server = (data.get("mcp_servers") or {}).get(SERVER_NAME)
    if not isinstance(server, dict):
        return False
    argv = [str(server.get("command", ""))] + [str(a) for a in server.get("args") or []]
    return PYTHON_SERVER_MODULE in argv


def runtime_codex_home() -> Path:
    """The Codex home of the `codex app-server` Hermes' codex runtime starts.

    Hermes builds that process's environment with `hermes_subprocess_env`
    (tools/environments/local.py), which may move HOME for subprocesses, and
    passes no CODEX_HOME of its own; codex then reads $CODEX_HOME (taken as
    written, relative to the working directory), else $HOME/.codex.
    """
    try:
        from tools.environments.local import hermes_subprocess_env

        env = hermes_subprocess_env(inherit_credentials=True)
    except Exception:
        env = dict(os.environ)
    value = env.get("CODEX_HOME") or ""
    if value:
        return Path(os.path.abspath(value))
    home = env.get("HOME") or str(Path.home())
    return Path(home) / ".codex"


def load_settings(path: Path = SETTINGS_FILE) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        log(logging.WARNING, f"{path} is missing; run `hermes-mcp migrate` again")
        return None
    except (OSError, ValueError) as exc:
        log(logging.WARNING, f"cannot read {path}: {exc}")
        return None
    argv = data.get("argv") if isinstance(data, dict) else None
    if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
        log(logging.WARNING, f"{path} has no argv; run `hermes-mcp migrate` again")
        return None
    return data


def migrate_env(settings: dict, codex_home: Path) -> dict:
    """Hermes' environment without the variables migrate's run did not have,
    with CODEX_HOME set to the home the plugin keeps current."""
    env = dict(os.environ)
    for name in settings.get("env_unset") or []:
        env.pop(str(name), None)
    env["CODEX_HOME"] = str(codex_home)
    return env


# The background run: its thread, the hermes-mcp it waits for, and DONE, set
# whenever no run is going on (tests and Hermes' exit wait on it).
_lock = threading.Lock()
_worker: threading.Thread | None = None
_child: subprocess.Popen | None = None
DONE = threading.Event()
DONE.set()


def run(argv: list[str], env: dict, timeout: int) -> subprocess.CompletedProcess:
    """`subprocess.run`, with the child kept in `_child` while it runs (so
    Hermes' exit can stop a hung one)."""
    global _child
    with subprocess.Popen(
        argv,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        _child = child
        try:
            out, err = child.communicate(timeout=timeout)
        except BaseException:
            child.kill()
            child.wait()
            raise
        finally:
            _child = None
    return subprocess.CompletedProcess(argv, child.returncode, out, err)


def block_is_stale(argv: list[str], env: dict) -> bool | None:
    """`migrate --check --json --no-plugins`: does config.toml differ from
    what migrate would write? None (and a warning) when the check failed."""
    check = argv + ["--check", "--json"]
    if "--no-plugins" not in check:
        # Discovery spawns codex; the check keeps the previous block's plugins.
        check.append("--no-plugins")
    try:
        done = run(check, env, CHECK_TIMEOUT_SECONDS)
        report = json.loads(done.stdout) if done.stdout.strip() else {}
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        log(
            logging.WARNING,
            f"`{' '.join(check)}` could not run: {exc}\n"
            "reinstall hermes-mcp, then run `hermes-mcp migrate`",
        )
        return None
    if done.returncode not in (0, 1) or not isinstance(report, dict):
        errors = report.get("errors") if isinstance(report, dict) else None
        why = "\n".join(map(str, errors)) if errors else (done.stderr or done.stdout)
        log(logging.WARNING, f"`{' '.join(check)}` exited {done.returncode}:\n{why}")
        return None
    return bool(report.get("config_toml_changed"))


def keep_current(settings: dict | None = None) -> str:
    """Re-migrate when the managed block Hermes' codex will read is stale.

    Returns "unchanged", "restored" (Hermes' Python server was back),
    "updated" (the block was stale), or "failed: <why>" (for tests and logs).
    """
    settings = settings if settings is not None else load_settings()
    if settings is None:
        return "failed: no settings"
    codex_home = runtime_codex_home()
    config = codex_home / "config.toml"
    try:
        text = config.read_text(encoding="utf-8")
    except FileNotFoundError:
        return "unchanged"
    except (OSError, UnicodeDecodeError) as exc:
        log(logging.WARNING, f"cannot read {config}: {exc}")
        return f"failed: {exc}"
    if not has_block(text):
        return "unchanged"
    argv = list(settings["argv"]) + ["--codex-home", str(codex_home)]
    env = migrate_env(settings, codex_home)
    replaced = python_server_in_block(managed_block(text))
    if not replaced:
        stale = block_is_stale(argv, env)
        if stale is None:
            return "failed: check"
        if not stale:
            return "unchanged"
    why = REPLACED if replaced else "the managed block is stale"
    log(logging.INFO, f"{why} in {config}; running {' '.join(argv)}")
    try:
        done = run(argv, env, MIGRATE_TIMEOUT_SECONDS)
    except (OSError, subprocess.SubprocessError) as exc:
        log(
            logging.WARNING,
            f"{why}, and `{' '.join(argv)}` could not run: {exc}\n"
            "reinstall hermes-mcp, then run `hermes-mcp migrate`",
        )
        return f"failed: {exc}"
    if done.returncode != 0:
        log(
            logging.WARNING,
            f"{why}, and `{' '.join(argv)}` exited {done.returncode}:\n"
            f"{(done.stderr or done.stdout).strip()}",
        )
        return f"failed: exit {done.returncode}"
    log(logging.INFO, done.stdout)
    return "restored" if replaced else "updated"


def _background() -> None:
    try:
        keep_current()
    except Exception as exc:  # never break Hermes
        log(logging.WARNING, f"on_session_start failed: {exc}")
    finally:
        DONE.set()


def on_session_start(**_kwargs) -> None:
    """Start keep_current() in the background; wait for it INLINE_WAIT_SECONDS at most."""
    global _worker
    try:
        with _lock:
            if _worker is None or not _worker.is_alive():
                DONE.clear()
                _worker = threading.Thread(
                    target=_background, name="hermes-mcp-keep-current", daemon=True
                )
                _worker.start()
        DONE.wait(INLINE_WAIT_SECONDS)
    except Exception as exc:  # never break Hermes' session start
        DONE.set()
        log(logging.WARNING, f"on_session_start failed: {exc}")


def _at_exit() -> None:
    """Hermes exits: give a run still going EXIT_WAIT_SECONDS, then stop its
    hermes-mcp (a daemon thread dies with the interpreter; its child would not)."""
    if DONE.wait(EXIT_WAIT_SECONDS):
        return
    child = _child
    if child is not None and child.poll() is None:
        child.kill()
        log(
            logging.WARNING,
            f"`{' '.join(map(str, child.args))}` was still running as Hermes exited; stopped it",
        )


atexit.register(_at_exit)


def register(ctx) -> None:
    ctx.register_hook("on_session_start", on_session_start)
