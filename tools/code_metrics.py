#!/usr/bin/env python3
"""Figures about the source tree that the architecture work is judged by.

    python3 tools/code_metrics.py [--repo DIR] [--json]

Prints, for non-test code in src/ (a file's `#[cfg(test)]` module and everything after it are
left out): lines per module (top-level modules, each toolset, and llm's/browser's sub-rooms),
`serde_json::Value` mentions, string literals spelling a kanban status, string literals spelling
an auxiliary-provider name, and the largest files. Run it on two checkouts to compare.
"""

import argparse
import json
import os
import re
import sys
from collections import Counter

KANBAN_STATUSES = ["triage", "todo", "ready", "running", "blocked", "done", "archived"]

# Hermes' provider names (hermes_cli/auth.py PROVIDER_REGISTRY and agent/auxiliary_client.py).
PROVIDERS = """openrouter nous openai-codex custom auto main openai-api lmstudio gemini zai
kimi-coding kimi-coding-cn stepfun arcee gmi minimax anthropic alibaba alibaba-coding-plan
minimax-cn deepseek xai nvidia opencode-zen opencode-go kilocode huggingface xiaomi
tencent-tokenhub ollama-cloud deepinfra fireworks novita upstage copilot copilot-acp
azure-foundry bedrock vertex qwen-oauth ai-gateway""".split()


def non_test_text(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    m = re.search(r"^\s*#\[cfg\(test\)\]\s*\n\s*(pub(\([a-z]+\))?\s+)?mod\s", text, re.M)
    return text[: m.start()] if m else text


def code_lines(text):
    return sum(1 for line in text.splitlines() if line.strip() and not line.strip().startswith("//"))


def module_of(rel):
    parts = rel.split("/")
    if parts[0] in ("toolsets", "llm") and len(parts) > 2:
        if parts[0] == "toolsets" and parts[1] == "browser" and len(parts) > 3:
            return "/".join(parts[:3])
        return "/".join(parts[:2])
    if len(parts) == 1:
        return parts[0][:-3] if parts[0].endswith(".rs") else parts[0]
    return parts[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    src = os.path.join(args.repo, "src")
    lines, files = Counter(), {}
    value = status = provider = 0
    status_re = re.compile(r'"(%s)"' % "|".join(KANBAN_STATUSES))
    provider_re = re.compile(r'"(%s)"' % "|".join(re.escape(p) for p in PROVIDERS))
    for root, _dirs, names in os.walk(src):
        for n in names:
            if not n.endswith(".rs"):
                continue
            p = os.path.join(root, n)
            rel = os.path.relpath(p, src).replace(os.sep, "/")
            text = non_test_text(p)
            cl = code_lines(text)
            lines[module_of(rel)] += cl
            files[rel] = cl
            value += len(re.findall(r"\bValue\b", text)) if "serde_json" in text else 0
            if rel.startswith("toolsets/kanban/"):
                status += len(status_re.findall(text))
            provider += len(provider_re.findall(text))
    out = {
        "code_lines_total": sum(lines.values()),
        "files": len(files),
        "code_lines_per_module": dict(sorted(lines.items())),
        "serde_json_value_mentions": value,
        "kanban_status_literals": status,
        "provider_name_literals": provider,
        "largest_files": sorted(files.items(), key=lambda kv: -kv[1])[:10],
    }
    if args.json:
        json.dump(out, sys.stdout, indent=1)
        print()
        return
    print(f"non-test code lines in src/: {out['code_lines_total']} in {out['files']} files")
    for k, v in out["code_lines_per_module"].items():
        print(f"  {k:32} {v:6}")
    print(f"serde_json::Value mentions (non-test src): {value}")
    print(f"kanban status string literals (toolsets/kanban): {status}")
    print(f"provider-name string literals (src): {provider}")
    print("largest files (code lines): " + ", ".join(f"{k} {v}" for k, v in out["largest_files"]))


if __name__ == "__main__":
    main()
