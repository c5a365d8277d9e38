"""Operator commands and bad input for session provisioning: `mcec provision` and
`mcec sessions list|rm|reap` from outside, wrongly typed or oversized provision arguments,
a sessions root that is a file or cannot be written, a full disk, a hand-garbled session
settings file, and two operators deleting the same session at once. Each gets a clear error
or a correct result, and no half-made session is left behind."""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import threading
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcec_e2e import (
    HANG_GUARD_S,
    Copy,
    RawStdio,
    manual_copy,
    run_cli,
    sdk_stdio,
    session_copy,
    sessions_root,
)
from sessions_support import (
    OPERATOR_SETTINGS,
    call,
    check_handoff,
    check_session_files,
    end,
    error_code,
    mcp,
    provision,
    session_dirs,
    start_stdio,
    tree_snapshot,
)


# --------------------------------------------------------------------------- 8. CLI


def json_blocks(text: str) -> list[Any]:
    """The JSON objects printed at the start of lines in `text`, in order."""
    decoder = json.JSONDecoder()
    blocks, pos = [], 0
    while (start := text.find("\n{", pos)) != -1:
        obj, end_at = decoder.raw_decode(text, start + 1)
        blocks.append(obj)
        pos = end_at
    return blocks


def test_cli_provision_needs_the_opt_in(tmp_path: Path) -> None:
    op = manual_copy(tmp_path / "op", settings="AgentCommandsEnabled = true\n")
    code, out, err = run_cli(op, ["provision"])
    assert code != 0
    assert "AllowSessionProvisioning" in err, err
    assert out == ""
    assert session_dirs(op) == []


def test_cli_provision_prints_the_client_config(operator: Copy) -> None:
    code, out, err = run_cli(operator, ["provision"])
    assert code == 0, err
    [sdir] = session_dirs(operator)
    settings = tomllib.loads((sdir / "mcec.settings").read_text())
    token, port = settings["McpAuthToken"], settings["McpHttpPort"]
    blocks = json_blocks(out)
    assert len(blocks) == 2, out
    stdio_cfg, http_cfg = (next(iter(b["mcpServers"].values())) for b in blocks)
    assert stdio_cfg == {"command": str(sdir / "mcec"), "args": ["mcp"]}, stdio_cfg
    assert http_cfg["url"] == f"http://127.0.0.1:{port}/mcp", http_cfg
    assert http_cfg["headers"] == {"Authorization": f"Bearer {token}"}, http_cfg
    assert token not in operator.log(), "the token goes to stdout only, never the log"

    # --no-mcp-server: stdio only; --commands: only those, unknown ones warned about.
    code, out, err = run_cli(operator, ["provision", "--no-mcp-server", "--commands", "capture,bogus,launch"])
    assert code == 0, err
    assert len(json_blocks(out)) == 1, out
    assert "bogus" in out and "launch" in out, out

    code, out, err = run_cli(operator, ["provision", "--json", "--commands", "capture,windows"])
    assert code == 0, err
    handoff = json.loads(out)
    check_handoff(handoff, operator, http=True)
    check_session_files(handoff, http=True, expect_enabled={"capture", "windows"})


def test_cli_sessions_list_rm_and_rm_all(operator: Copy, raw_servers: list[RawStdio]) -> None:
    made = [json.loads(run_cli(operator, ["provision", "--json", "--no-mcp-server"])[1]) for _ in range(3)]
    a, b, c = made
    start_stdio(session_copy(operator, b), raw_servers)

    code, out, err = run_cli(operator, ["sessions", "list", "--json"])
    assert code == 0, err
    listed = {s["id"]: s for s in json.loads(out)}
    assert set(listed) == {h["sessionId"] for h in made}
    assert {i: s["running"] for i, s in listed.items()} == {a["sessionId"]: False, b["sessionId"]: True,
                                                            c["sessionId"]: False}
    assert {i: s["state"] for i, s in listed.items()} == {a["sessionId"]: "not-started", b["sessionId"]: "running",
                                                          c["sessionId"]: "not-started"}
    for s in listed.values():
        assert s["sizeBytes"] > 0 and s["ageSecs"] >= 0 and s["directory"].endswith(s["id"])
    code, out, _ = run_cli(operator, ["sessions", "list"])
    assert code == 0 and all(h["sessionId"] in out for h in made) and "running" in out and "not started" in out

    code, out, err = run_cli(operator, ["sessions", "rm", a["sessionId"]])
    assert code == 0, (out, err)
    assert "removed" in out and not Path(a["directory"]).exists()
    code, out, _ = run_cli(operator, ["sessions", "rm", a["sessionId"]])
    assert code == 0 and "already gone" in out, out
    code, out, _ = run_cli(operator, ["sessions", "rm", "../etc"])
    assert code != 0 and "not a session id" in out, out

    code, out, err = run_cli(operator, ["sessions", "rm", "--all"])
    assert code != 0, "a skipped running session is not a clean run"
    assert b["sessionId"] in out and "running" in out, out
    assert not Path(c["directory"]).exists()
    assert Path(b["directory"]).is_dir()


# --------------------------------------------------------------------------- 9. bad input


@pytest.mark.anyio
async def test_bad_provision_arguments(operator: Copy) -> None:
    cases = [
        ({"commands": [1]}, "commands"),
        ({"commands": ["capture", None]}, "commands"),
        ({"commands": "capture"}, "commands"),
        ({"commands": {"capture": True}}, "commands"),
        ({"mcpServer": "true"}, "mcpServer"),
        ({"mcpServer": 1}, "mcpServer"),
        ({"commands": ["capture"] * 10_000}, "commands"),
        ({"frobnicate": True}, "frobnicate"),
    ]
    async with mcp(operator) as session:
        for args, field in cases:
            env = await call(session, "provision-session", **args)
            assert error_code(env) == "bad-arguments", (args if len(str(args)) < 200 else field, env)
            assert field in env["error"]["detail"], env
            assert session_dirs(operator) == [], "nothing created by a refused call"

        env = await call(session, "provision-session", mcpServer=False,
                         commands=["capture", "", "capture", "  ", "bogus", "launch"])
        assert env["ok"] is True, env
        warnings = " | ".join(env.get("warnings", []))
        assert "empty" in warnings and "more than once" in warnings, warnings
        assert "bogus" in warnings and "launch" in warnings, warnings
        check_session_files(env["result"], http=False, expect_enabled={"capture"})


@pytest.mark.anyio
async def test_sessions_root_that_is_a_file(operator: Copy, raw_servers: list[RawStdio]) -> None:
    root = sessions_root(operator)
    root.parent.mkdir(parents=True)
    root.write_text("not a directory\n")
    state = Path(operator.env()["XDG_STATE_HOME"])
    before = tree_snapshot(state)
    async with mcp(operator) as session:
        env = await call(session, "provision-session")
        assert error_code(env) == "provisioning-failed", env
        assert "not a directory" in env["error"]["detail"] and str(root) in env["error"]["detail"], env
    code, out, err = run_cli(operator, ["sessions", "reap"])
    assert code == 1, (out, err)
    assert "removed 0 stale session(s)" in out and f"cannot read the sessions root {root}" in out, out
    assert "panicked" not in err, err
    assert tree_snapshot(state) == before
    assert root.read_text() == "not a directory\n"


@pytest.mark.anyio
async def test_end_session_when_sessions_root_is_a_file(operator: Copy) -> None:
    """No session can exist there: the answer is either `alreadyGone` or an error that says
    what is wrong with the sessions root, never a claim about a session that never was."""
    root = sessions_root(operator)
    root.parent.mkdir(parents=True)
    root.write_text("not a directory\n")
    async with mcp(operator) as session:
        env = await end(session, "0123456789ab", "x" * 64)
    if env["ok"]:
        assert env["result"].get("alreadyGone") is True, env
    else:
        detail = env["error"]["detail"]
        assert "not a directory" in detail or "sessions root" in detail, env
    assert root.read_text() == "not a directory\n"


# Mounts happen in a private user + mount namespace (`unshare -rm`), which works as root and,
# where user namespaces are allowed, as anyone, without touching the machine's mounts. The
# script mounts, runs `mcec mcp` as a child, and before the namespace (and its mount) goes
# away writes what is left inside the mount to a report file outside it.
IN_PRIVATE_MOUNT = """
mount -t tmpfs -o "$1" tmpfs "$2" || { echo "mount -o $1 failed" >&2; exit 97; }
where=$2; report=$3; shift 3
"$@"
code=$?
(cd "$where" && find . -mindepth 1 | sort) > "$report"
exit $code
"""


def private_mount(options: str, where: Path, report: Path) -> list[str]:
    """A wrapper command that runs its arguments with a fresh tmpfs (`options`) on `where`.
    Fails the test, loudly, where namespaces are not allowed: these cases never skip."""
    probe = subprocess.run(["unshare", "-rm", "--", "mount", "-t", "tmpfs", "tmpfs", "/mnt"], capture_output=True)
    if probe.returncode != 0:
        pytest.fail(
            "this case mounts a private tmpfs with `unshare -rm` (user + mount namespaces), which this "
            f"machine refuses: {probe.stderr.decode(errors='replace').strip()}. Run it where namespaces are allowed."
        )
    where.mkdir(parents=True, exist_ok=True)
    return ["unshare", "-rm", "--", "sh", "-c", IN_PRIVATE_MOUNT, "sh", options, str(where), str(report)]


@pytest.mark.anyio
@pytest.mark.parametrize("how", ["full-tmpfs", "file-size-limit", "read-only-root"])
async def test_unwritable_state_leaves_no_half_made_session(tmp_path: Path, how: str) -> None:
    """The state dir cannot take a session: a tmpfs too small for the executable (a real
    full disk), a file-size limit (EFBIG part-way through the copy), or a sessions root on a
    read-only mount. Provisioning fails with the cause, nothing is left."""
    op = manual_copy(tmp_path / "op", settings=OPERATOR_SETTINGS)
    if how == "file-size-limit":
        def limit() -> None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

        code, out, err = run_cli(op, ["provision", "--json"], preexec_fn=limit)
        assert code != 0, out
        assert "provisioning failed" in err and "File too large" in err, err
        assert session_dirs(op) == []
        root = sessions_root(op)
        leftovers = [p.name for p in root.iterdir() if p.name != ".mcec-sessions.lock"] if root.is_dir() else []
        assert leftovers == [], leftovers
        return

    report = tmp_path / "left-in-the-mount.txt"
    if how == "full-tmpfs":
        # The whole state dir is a 4 MiB tmpfs: the executable does not fit.
        where = tmp_path / "small-state"
        op.extra_env["XDG_STATE_HOME"] = str(where)
        wrapper = private_mount("size=4m", where, report)
        allowed = {"./mcec", "./mcec/sessions", "./mcec/sessions/.mcec-sessions.lock"}
    else:
        where = sessions_root(op)
        wrapper = private_mount("ro,size=1m", where, report)
        allowed = set()
    with anyio.fail_after(HANG_GUARD_S * 4):
        async with sdk_stdio(op, wrapper=wrapper) as (session, _init):
            env = await call(session, "provision-session")
    assert error_code(env) == "provisioning-failed", env
    assert "nothing was left behind" in env["error"]["detail"], env
    # The cause names the mount, so the case really ran on it.
    expected_cause = "No space left on device" if how == "full-tmpfs" else "Read-only file system"
    assert expected_cause in env["error"]["detail"], env
    left = set(report.read_text().split())
    assert left <= allowed, f"left in the mount: {sorted(left - allowed)}"


@pytest.mark.anyio
async def test_garbled_session_settings_fail_closed(operator: Copy) -> None:
    async with mcp(operator) as session:
        handoff = await provision(session, mcpServer=False)
    directory = Path(handoff["directory"])
    (directory / "mcec.settings").write_text('McpAuthToken = "' + handoff["token"] + '\n}}} garbage [[[\n')

    async with mcp(operator) as session:
        env = await end(session, handoff["sessionId"], handoff["token"])
        assert error_code(env) == "session-token-invalid", env
    assert directory.is_dir() and (directory / "mcec").is_file()

    # The copy itself serves the protocol with the agent surface off instead of crashing.
    sess = session_copy(operator, handoff)
    async with mcp(sess) as session:
        names = {t.name for t in (await session.list_tools()).tools}
        assert names <= {"provision-session", "end-session"}, names
        for tool in ("session-status", "capture", "click"):
            env = await call(session, tool)
            assert error_code(env) == "agent-commands-disabled", (tool, env)
        env = await call(session, "provision-session")
        assert error_code(env) == "provisioning-not-authorized", env


def test_two_operators_removing_the_same_session(operator: Copy) -> None:
    for _ in range(3):
        code, out, err = run_cli(operator, ["provision", "--json", "--no-mcp-server"])
        assert code == 0, err
        sid = json.loads(out)["sessionId"]
        results: list[tuple[int, str, str]] = []
        barrier = threading.Barrier(2)

        def rm() -> None:
            barrier.wait()
            results.append(run_cli(operator, ["sessions", "rm", sid]))

        threads = [threading.Thread(target=rm) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=HANG_GUARD_S * 2)
        outs = sorted(r[1].strip() for r in results)
        assert [r[0] for r in results] == [0, 0], results
        assert outs == [f"{sid}: already gone", f"{sid}: removed"], outs
        assert session_dirs(operator) == []
