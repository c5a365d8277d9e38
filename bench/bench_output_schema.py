#!/usr/bin/env python3
"""What a tool's `outputSchema` costs a Python client per call, construct by construct.

    PYTHON bench/bench_output_schema.py [--bin PATH] [--rounds 300]

The official Python SDK validates every `tools/call` result against the tool's
`outputSchema` with `jsonschema`:
  * mcp 1.x (1.13 here) calls `jsonschema.validate(result, schema)` on every call, which
    checks the schema itself against its metaschema (`check_schema`), builds a validator and
    validates: the `1.x call` column;
  * mcp 2.x compiles the validator once per schema and only validates per call: the `2.x
    call` column.
`check` and `build` are those first two steps on their own. Each row is one candidate envelope
schema (the one mcec serves, read from `--bin` when given, first); the instances are real
envelopes, a success and a failure, alternated. Run it with each SDK's Python (their
`jsonschema` versions may differ); the `jsonschema` version is printed. p50 over `--rounds`
rounds, in microseconds. Nothing is asserted, but every candidate is checked to accept both
envelopes and reject one that mixes the branches, and a row says when it does not.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import jsonschema
from jsonschema.validators import validator_for

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))

DRAFT7 = "http://json-schema.org/draft-07/schema#"
CODE = {"type": "string", "pattern": "^[a-z][a-z-]*$"}

OK = {"ok": True, "runId": "r-5f3a", "result": {"displays": [{"index": 0, "primary": True, "bounds": [0, 0, 1280, 800]}]}}
FAIL = {
    "ok": False,
    "runId": "r-5f3a",
    "error": {"code": "emergency-stopped", "category": "refused", "detail": "The operator pressed the stop."},
}
MIXED = {**FAIL, "ok": True}


def served(binary: Path) -> dict | None:
    """The envelope schema `binary` serves (the first tool's `outputSchema`)."""
    import mcec_e2e
    from mcec_e2e import RawStdio, manual_copy

    mcec_e2e.BIN = binary.resolve()
    with tempfile.TemporaryDirectory(prefix="mcec-bench-schema-") as tmp:
        mcp = RawStdio(manual_copy(Path(tmp), settings="AgentCommandsEnabled = true\n"))
        try:
            mcp.initialize()
            tools = mcp.request("tools/list", {}, id=2)["result"]["tools"]
        finally:
            mcp.kill()
    return tools[0].get("outputSchema")


def base(error_code: dict = CODE, described: bool = True) -> dict:
    d = (lambda text: {"description": text}) if described else (lambda text: {})
    return {
        "type": "object",
        **d("mcec's envelope: `ok` says which branch; `result` on success, `error` on failure."),
        "properties": {
            "ok": {"type": "boolean"},
            "runId": {"type": "string", **d("This mcec process's run id.")},
            "result": {**d("What the tool produced.")},
            "warnings": {"type": "array", "items": {"type": "string"}},
            "error": {
                "type": "object",
                "properties": {
                    "code": {**error_code, **d("Machine-readable reason, e.g. `emergency-stopped`.")},
                    "category": {**error_code, **d("The code's family, e.g. `refused`.")},
                    "detail": {"type": "string", **d("What happened and what to do next.")},
                },
                "required": ["code", "category", "detail"],
                "additionalProperties": False,
            },
        },
        "required": ["ok", "runId"],
        "additionalProperties": False,
    }


ONE_OF = {
    "oneOf": [
        {"properties": {"ok": {"const": True}}, "required": ["result"], "not": {"required": ["error"]}},
        {
            "properties": {"ok": {"const": False}},
            "required": ["error"],
            "not": {"anyOf": [{"required": ["result"]}, {"required": ["warnings"]}]},
        },
    ]
}
IF_THEN = {
    "if": {"properties": {"ok": {"const": True}}},
    "then": {"required": ["result"], "properties": {"error": False}},
    "else": {"required": ["error"], "properties": {"result": False, "warnings": False}},
}
ANY_OF_FALSE = {
    "anyOf": [
        {"properties": {"ok": {"const": True}, "error": False}, "required": ["result"]},
        {"properties": {"ok": {"const": False}, "result": False, "warnings": False}, "required": ["error"]},
    ]
}


def candidates(served_schema: dict | None) -> list[tuple[str, dict]]:
    plain = {"type": "string"}
    rows = []
    if served_schema is not None:
        rows.append(("served by --bin", served_schema))
        rows.append(("served + $schema draft-07", {"$schema": DRAFT7, **served_schema}))
    full = json.loads((HERE.parent / "docs" / "envelope.schema.json").read_text())
    rows += [
        ("full envelope (the tests' oracle)", full),
        ("oneOf+not+pattern (issue's)", {**base(), **ONE_OF}),
        ("  without pattern", {**base(plain), **ONE_OF}),
        ("  without oneOf/not", base()),
        ("  without descriptions", {**base(described=False), **ONE_OF}),
        ("  draft-07", {"$schema": DRAFT7, **base(), **ONE_OF}),
        ("if/then/else, false, no pattern", {**base(plain), **IF_THEN}),
        ("  draft-07", {"$schema": DRAFT7, **base(plain), **IF_THEN}),
        ("anyOf, false, no pattern", {**base(plain), **ANY_OF_FALSE}),
        ("  draft-07", {"$schema": DRAFT7, **base(plain), **ANY_OF_FALSE}),
        ("flat, no pattern, draft-07", {"$schema": DRAFT7, **base(plain)}),
        ("small (a peer's size)", {"type": "object", "properties": {"ok": {"type": "boolean"}, "runId": {"type": "string"}}, "required": ["ok"]}),
    ]
    return rows


def p50_us(fn, rounds: int) -> float:
    samples = []
    for i in range(rounds):
        t = time.perf_counter()
        fn(i)
        samples.append(time.perf_counter() - t)
    return statistics.median(samples) * 1e6


def truthful(schema: dict) -> str:
    v = validator_for(schema)(schema)
    if not (v.is_valid(OK) and v.is_valid(FAIL)):
        return "REJECTS A REAL ENVELOPE"
    return "" if not v.is_valid(MIXED) else "accepts a mixed envelope"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", type=Path, default=os.environ.get("MCEC_BIN"), help="mcec binary whose schema to add")
    ap.add_argument("--rounds", type=int, default=300)
    args = ap.parse_args()
    served_schema = served(Path(args.bin)) if args.bin else None
    print(f"python {sys.version.split()[0]}, jsonschema {jsonschema.__version__ if hasattr(jsonschema, '__version__') else '?'}"
          f", load {os.getloadavg()[0]:.2f}, p50 of {args.rounds} rounds, us")
    print(f"{'candidate':<34} {'bytes':>6} {'check':>8} {'build':>8} {'1.x call':>9} {'2.x call':>9}  note")
    instances = (OK, FAIL)
    for label, schema in candidates(served_schema):
        schema = copy.deepcopy(schema)
        cls = validator_for(schema)
        size = len(json.dumps(schema, separators=(",", ":")).encode())
        check = p50_us(lambda i: cls.check_schema(schema), args.rounds)
        build = p50_us(lambda i: cls(schema), args.rounds)
        one = p50_us(lambda i: jsonschema.validate(instances[i % 2], schema), args.rounds)
        compiled = cls(schema)
        two = p50_us(lambda i: jsonschema.exceptions.best_match(compiled.iter_errors(instances[i % 2])), args.rounds)
        print(f"{label:<34} {size:>6} {check:>8.0f} {build:>8.0f} {one:>9.0f} {two:>9.0f}  {cls.__name__} {truthful(schema)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
