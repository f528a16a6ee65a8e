#!/usr/bin/env python3
"""Benchmark: load, validate/downscale and encode a 4000x3000 JPEG for the model.

Measures, each in its own process (so peak RSS is that pipeline's alone):
  * hermes-mcp   - our pipeline (src/toolsets/vision/prep.rs, built in release by
                   tools/bench_vision/Cargo.toml): read file, sniff, decode (validates),
                   downscale to 1568 px long side, JPEG q85, base64 data URL.
  * pillow-same  - the same steps through Pillow (open, load, LANCZOS resize to 1568,
                   JPEG q85, base64), from the Hermes venv.
  * hermes-native - Hermes' own native fast path functions (tools/vision_tools.py:
                   _image_to_base64_data_url, then _resize_image_for_vision when over the
                   4 MB / 7900 px embed caps), i.e. what Hermes does for this image.

    python3 tools/bench_vision.py [--runs 15] [--python /opt/hermes-venv/bin/python]

Prints a table of median milliseconds and peak RSS, with ratios against each baseline.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "target" / "bench_vision"

MAKE_IMAGE = r"""
import sys, random
from PIL import Image, ImageDraw, ImageFilter
random.seed(7)
w, h = 4000, 3000
img = Image.linear_gradient("L").resize((w, h)).convert("RGB")
r = Image.radial_gradient("L").resize((w, h))
img = Image.merge("RGB", (img.split()[0], r, img.split()[0].transpose(Image.FLIP_LEFT_RIGHT)))
d = ImageDraw.Draw(img)
for _ in range(400):
    x, y = random.randrange(w), random.randrange(h)
    s = random.randrange(20, 300)
    d.ellipse([x, y, x + s, y + s], fill=tuple(random.randrange(256) for _ in range(3)))
noise = Image.effect_noise((w, h), 40).convert("RGB")
img = Image.blend(img, noise, 0.15).filter(ImageFilter.GaussianBlur(0.6))
img.save(sys.argv[1], "JPEG", quality=92)
"""

PILLOW_SAME = r"""
import base64, io, json, sys, time
from PIL import Image
path, n = sys.argv[1], int(sys.argv[2])
ms = []
for _ in range(n):
    t0 = time.perf_counter()
    data = open(path, "rb").read()
    img = Image.open(io.BytesIO(data)); img.load()
    w, h = img.size
    s = 1568 / max(w, h)
    if s < 1:
        img = img.resize((round(w * s), round(h * s)), Image.LANCZOS)
    buf = io.BytesIO(); img.convert("RGB").save(buf, "JPEG", quality=85)
    url = "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
    ms.append((time.perf_counter() - t0) * 1000)
rss = int([l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1])
print(json.dumps({"ms": ms, "data_url_bytes": len(url), "width": img.width, "height": img.height, "peak_rss_kb": rss}))
"""

HERMES_NATIVE = r"""
import json, sys, time, logging
logging.disable(logging.CRITICAL)
from pathlib import Path
from tools import vision_tools as vt
path, n = Path(sys.argv[1]), int(sys.argv[2])
ms = []
for _ in range(n):
    t0 = time.perf_counter()
    data = path.read_bytes()
    mime = vt._detect_image_mime_type_from_bytes(data)
    url = vt._image_to_base64_data_url(path, mime_type=mime)
    if len(url) > vt._EMBED_TARGET_BYTES or vt._image_exceeds_dimension(path, vt._EMBED_MAX_DIMENSION):
        url = vt._resize_image_for_vision(path, mime_type=mime,
                                          max_base64_bytes=vt._EMBED_TARGET_BYTES,
                                          max_dimension=vt._EMBED_MAX_DIMENSION)
    ms.append((time.perf_counter() - t0) * 1000)
import base64, io
from PIL import Image
im = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
rss = int([l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1])
print(json.dumps({"ms": ms, "data_url_bytes": len(url), "width": im.width, "height": im.height, "peak_rss_kb": rss}))
"""


def run(cmd, cwd=None):
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--python", default=os.environ.get("HERMES_PYTHON", "/opt/hermes-venv/bin/python"))
    a = ap.parse_args()

    subprocess.run(["cargo", "build", "--release", "--quiet", "--manifest-path",
                    str(ROOT / "tools/bench_vision/Cargo.toml")],
                   check=True, env={**os.environ, "CARGO_TARGET_DIR": str(TARGET)})
    exe = TARGET / "release" / "bench_vision"
    site = subprocess.run([a.python, "-c", "import tools, os; print(os.path.dirname(os.path.dirname(tools.__file__)))"],
                          capture_output=True, text=True, check=True).stdout.strip()

    with tempfile.TemporaryDirectory() as d:
        img = Path(d) / "photo-4000x3000.jpg"
        subprocess.run([a.python, "-c", MAKE_IMAGE, str(img)], check=True)
        size = img.stat().st_size
        results = {
            "hermes-mcp": run([str(exe), str(img), str(a.runs)]),
            "pillow-same": run([a.python, "-c", PILLOW_SAME, str(img), str(a.runs)]),
            "hermes-native": run([a.python, "-c", HERMES_NATIVE, str(img), str(a.runs)], cwd=site),
        }

    print(f"input: 4000x3000 JPEG, {size / 1e6:.2f} MB; {a.runs} runs each (first run included)")
    print(f"{'pipeline':<14} {'median ms':>10} {'min ms':>8} {'peak RSS MB':>12} {'output':>22}")
    for name, r in results.items():
        r["median"] = statistics.median(r["ms"])
        print(f"{name:<14} {r['median']:>10.1f} {min(r['ms']):>8.1f} {r['peak_rss_kb'] / 1024:>12.1f} "
              f"{str(r['width']) + 'x' + str(r['height']) + ' ' + format(r['data_url_bytes'] / 1e6, '.2f') + 'MB':>22}")
    ours = results["hermes-mcp"]
    for base in ("pillow-same", "hermes-native"):
        b = results[base]
        print(f"hermes-mcp vs {base}: time x{ours['median'] / b['median']:.2f}, "
              f"peak RSS x{ours['peak_rss_kb'] / b['peak_rss_kb']:.2f}")
    print(json.dumps({k: {kk: vv for kk, vv in v.items() if kk != 'ms'} for k, v in results.items()}))


if __name__ == "__main__":
    main()
