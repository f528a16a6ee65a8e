"""hermes-mcp's Hermes plugin: keep Codex's hermes-tools pointing at hermes-mcp.

`hermes-mcp migrate` writes this directory to $HERMES_HOME/plugins/hermes-mcp/
and adds `hermes-mcp` to `plugins.enabled` in config.yaml (opt out with
`hermes-mcp migrate --no-hermes-hook`; remove with `hermes-mcp migrate --remove`).

Hermes' `/codex-runtime codex_app_server` re-runs Hermes' own migrator, which
rewrites the managed block of Codex's config.toml with its Python callback
server (`python -m agent.transports.hermes_tools_mcp_server`) as hermes-tools.
On the first turn of every new session, before Hermes starts `codex app-server`,
Hermes fires `on_session_start`; this plugin then reads the managed block
(in-process, well under a millisecond) and, only when Hermes' Python server is
in it, runs `hermes-mcp migrate` again with the options it was first run with.
It prints nothing; what it did goes to Hermes' log (agent.log). It never raises
into Hermes: a failure is logged and the session goes on.

Generated file: edit `src/migrate/hermes_hook/__init__.py` in hermes-mcp instead.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
from pathlib import Path

logger = logging.getLogger(__name__)

# Kept equal to src/migrate/hermes_hook.rs and src/migrate/block.rs (a Rust test checks).
PYTHON_SERVER_MODULE = "agent.transports.hermes_tools_mcp_server"
SERVER_NAME = "hermes-tools"
START = "# managed by hermes-agent \u2014 `hermes codex-runtime migrate` regenerates this section"
END = "# end hermes-agent managed section"
REPLACED = "Hermes' /codex-runtime replaced hermes-tools with its Python server"

SETTINGS_FILE = Path(__file__).resolve().with_name("settings.json")
MIGRATE_TIMEOUT_SECONDS = 60


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


def load_settings(path: Path = SETTINGS_FILE) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        logger.warning("hermes-mcp plugin: %s is missing; run `hermes-mcp migrate` again", path)
        return None
    except (OSError, ValueError) as exc:
        logger.warning("hermes-mcp plugin: cannot read %s: %s", path, exc)
        return None
    argv = data.get("argv") if isinstance(data, dict) else None
    config = data.get("codex_config") if isinstance(data, dict) else None
    if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
        logger.warning("hermes-mcp plugin: %s has no argv; run `hermes-mcp migrate` again", path)
        return None
    if not isinstance(config, str) or not config:
        logger.warning("hermes-mcp plugin: %s has no codex_config", path)
        return None
    return data


def check_and_restore(settings: dict | None = None) -> str:
    """Re-migrate when Hermes' Python server replaced hermes-mcp in the block.

    Returns "unchanged", "restored", or "failed: <why>" (for tests and logs).
    """
    settings = settings if settings is not None else load_settings()
    if settings is None:
        return "failed: no settings"
    config = Path(settings["codex_config"])
    try:
        text = config.read_text(encoding="utf-8")
    except FileNotFoundError:
        return "unchanged"
    except (OSError, UnicodeDecodeError) as exc:
        logger.warning("hermes-mcp plugin: cannot read %s: %s", config, exc)
        return f"failed: {exc}"
    if not python_server_in_block(managed_block(text)):
        return "unchanged"

    argv = settings["argv"]
    env = dict(os.environ)
    for name in settings.get("env_unset") or []:
        env.pop(str(name), None)
    logger.info("hermes-mcp plugin: %s in %s; running %s", REPLACED, config, argv)
    try:
        done = subprocess.run(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=MIGRATE_TIMEOUT_SECONDS,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        logger.warning(
            "hermes-mcp plugin: %s, and `%s` could not run: %s "
            "(reinstall hermes-mcp, then run `hermes-mcp migrate`)",
            REPLACED, " ".join(argv), exc,
        )
        return f"failed: {exc}"
    if done.returncode != 0:
        logger.warning(
            "hermes-mcp plugin: %s, and `%s` exited %s: %s",
            REPLACED, " ".join(argv), done.returncode, (done.stderr or done.stdout).strip(),
        )
        return f"failed: exit {done.returncode}"
    logger.info("hermes-mcp plugin: hermes-tools restored to hermes-mcp: %s", done.stdout.strip())
    return "restored"


def on_session_start(**_kwargs) -> None:
    try:
        check_and_restore()
    except Exception as exc:  # never break Hermes' session start
        logger.warning("hermes-mcp plugin: on_session_start failed: %s", exc)


def register(ctx) -> None:
    ctx.register_hook("on_session_start", on_session_start)
