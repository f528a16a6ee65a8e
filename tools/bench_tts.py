#!/usr/bin/env python3
"""text_to_speech (offline espeak-ng) through `hermes-mcp serve` vs espeak-ng run directly.

    python3 tools/bench_tts.py [target/debug/hermes-mcp]

Prints medians of 10 runs and the ratios against the direct espeak-ng baseline of the same run.
"""
import json, os, shutil, statistics, subprocess, sys, tempfile, time

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/debug/hermes-mcp"; N = 10
TMP = tempfile.mkdtemp(prefix="bench-tts-")
TEXT = "Hermes speaks offline. This sentence is long enough to last a few seconds."
env = dict(os.environ, HERMES_HOME=TMP + "/home")
# baseline: espeak-ng directly
open(TMP + "/text.txt","w").write(TEXT)
base = []
for i in range(N):
    t = time.perf_counter()
    subprocess.run(["espeak-ng","-b","1","-v","en","-s","175","-w",TMP + "/direct.wav","-f",TMP + "/text.txt"], check=True)
    base.append(time.perf_counter() - t)
p = subprocess.Popen([BIN, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
def rpc(i, m, params):
    p.stdin.write(json.dumps({"jsonrpc":"2.0","id":i,"method":m,"params":params})+"\n"); p.stdin.flush()
    while True:
        msg = json.loads(p.stdout.readline())
        if msg.get("id") == i: return msg
rpc(0, "initialize", {"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"0"}})
p.stdin.write(json.dumps({"jsonrpc":"2.0","method":"notifications/initialized"})+"\n"); p.stdin.flush()
tool = []
for i in range(N):
    t = time.perf_counter()
    r = rpc(i+1, "tools/call", {"name":"text_to_speech","arguments":{"text":TEXT,"output_path":f"{TMP}/home/o{i}.wav"}})
    tool.append(time.perf_counter() - t)
    assert not r["result"].get("isError"), r
ogg = []
for i in range(N):
    t = time.perf_counter()
    r = rpc(100+i, "tools/call", {"name":"text_to_speech","arguments":{"text":TEXT,"output_path":f"{TMP}/home/o{i}.ogg"}})
    ogg.append(time.perf_counter() - t)
p.stdin.close(); p.wait()
m = statistics.median
print(f"espeak-ng direct  median {m(base)*1000:.1f} ms")
print(f"text_to_speech wav median {m(tool)*1000:.1f} ms  ratio {m(tool)/m(base):.2f}x")
print(f"text_to_speech ogg median {m(ogg)*1000:.1f} ms  ratio {m(ogg)/m(base):.2f}x")
shutil.rmtree(TMP, ignore_errors=True)
