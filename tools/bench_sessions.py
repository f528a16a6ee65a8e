"""A Hermes state.db of many sessions for the benchmarks, filled through Hermes' own
SessionDB (tests/fixtures/session_search/fill_state.py) and cached under /tmp, one per
fill script version and session count."""

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

FILL = Path(__file__).resolve().parent.parent / "tests/fixtures/session_search/fill_state.py"
CACHE = Path("/tmp/hermes-mcp-bench-sessions")


def state_db(sessions: int, python: str) -> Path:
    """The cached state.db of `sessions` sessions, filled by `python` (Hermes' own) when absent."""
    digest = hashlib.sha256(FILL.read_bytes()).hexdigest()[:12]
    home = CACHE / f"{digest}-{sessions}"
    if not (home / "state.db").exists():
        tmp = CACHE / f"{digest}-{sessions}.partial"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        env = dict(os.environ, HERMES_HOME=str(tmp), TZ="UTC")
        subprocess.run([python, str(FILL), str(sessions)], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        tmp.rename(home)
    return home / "state.db"
