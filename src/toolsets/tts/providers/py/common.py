# Shared by hermes-mcp's local-model runners: the request arrives as JSON on
# stdin; a failure is reported as one `HERMES_MCP_ERROR {"type", "message"}`
# line on stderr so the server can word it as Hermes does (ValueError →
# configuration error, FileNotFoundError → dependency missing, ImportError →
# package not installed, anything else → generation failed).
import json
import struct
import sys


def read_request():
    return json.load(sys.stdin)


def fail(exc):
    sys.stderr.write(
        "HERMES_MCP_ERROR "
        + json.dumps({"type": type(exc).__name__, "message": str(exc)})
        + "\n"
    )
    sys.exit(3)


def write_wav(path, samples, sample_rate=24000):
    """Float samples in [-1, 1] as 16-bit mono WAV (hermes-agent:
    tools/neutts_synth.py `_write_wav`; soundfile is used first when present,
    as Hermes does)."""
    try:
        import soundfile as sf

        sf.write(str(path), samples, sample_rate)
        return
    except ImportError:
        pass
    try:
        import numpy as np

        arr = np.asarray(samples, dtype=np.float32).flatten()
        pcm = (np.clip(arr, -1.0, 1.0) * 32767).astype("<i2").tobytes()
    except ImportError:
        flat = list(samples)
        pcm = b"".join(
            struct.pack("<h", int(max(-1.0, min(1.0, float(s))) * 32767)) for s in flat
        )
    with open(path, "wb") as f:
        f.write(b"RIFF")
        f.write(struct.pack("<I", 36 + len(pcm)))
        f.write(b"WAVEfmt ")
        f.write(struct.pack("<IHHIIHH", 16, 1, 1, sample_rate, sample_rate * 2, 2, 16))
        f.write(b"data")
        f.write(struct.pack("<I", len(pcm)))
        f.write(pcm)
