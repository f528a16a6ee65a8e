"""A Hermes state.db of many sessions for the benchmarks, filled through Hermes' own
SessionDB (tests/fixtures/session_search/fill_state.py) and cached under /tmp, one per
fill script version and session count."""

import hashlib
import os
import shutil
import subprocess
import sys
import time
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
        t0 = time.perf_counter()
        subprocess.run([python, str(FILL), str(sessions)], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        print(f"built {sessions} sessions through SessionDB in {time.perf_counter() - t0:.0f}s",
              file=sys.stderr)
        tmp.rename(home)
    return home / "state.db"
