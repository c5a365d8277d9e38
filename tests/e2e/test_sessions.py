"""Isolated session provisioning from outside, through the official MCP Python SDK: the
opt-in, the handoff and the files it names, the session copy running by itself (lock,
HTTP bearer, port, tool surface), `end-session`, the reaper, symlinks planted in a session,
and concurrency. The operator's CLI and bad input are in test_sessions_cli.py.

Every session lives under the test's own XDG_STATE_HOME; nothing here touches the real
user's state. A session copy is started with the same HOME/XDG environment as the copy
that provisioned it, like an agent would start it from the handoff."""

from __future__ import annotations

import json
import signal
import socket
from pathlib import Path

import anyio
import pytest
from mcec_e2e import (
    HANG_GUARD_S,
    Copy,
    RawStdio,
    audit_with,
    backdate,
    installed_copy,
    manual_copy,
    raw_http,
    rpc,
    run_cli,
    run_to_exit,
    sdk_http,
    session_copy,
    sessions_root,
)
from sessions_support import (
    OPERATOR_SETTINGS,
    THIRTEEN_HOURS,
    call,
    catalogue_of,
    check_handoff,
    check_session_files,
    end,
    error_code,
    mcp,
    provision,
    running_host,
    session_dirs,
    start_stdio,
    tree_snapshot,
)


# --------------------------------------------------------------------------- 1. opt-in


@pytest.mark.anyio
async def test_installed_copy_is_bootstrap_only_and_provisions(tmp_path: Path) -> None:
    op = installed_copy(tmp_path / "inst")
    op.write_settings(OPERATOR_SETTINGS)
    # Operator files that must never reach a session, beside the binary and in the config dir.
    for planted in (op.exe.parent / "mcec.settings", op.exe.parent / "mcec.commands", op.exe.parent / "old.log"):
        planted.write_text("# operator's own file\n")
    op.enable_commands("capture")
    async with mcp(op) as session:
        names = [t.name for t in (await session.list_tools()).tools]
        assert sorted(names) == ["end-session", "provision-session"], names
        env = await call(session, "session-status")
        assert error_code(env) == "bootstrap-only", env
        handoff = await provision(session)
    check_handoff(handoff, op, http=True)
    check_session_files(handoff, http=True)
    assert "operator's own file" not in (Path(handoff["directory"]) / "mcec.settings").read_text()


@pytest.mark.anyio
async def test_manual_copy_provisions_stdio_only_session(operator: Copy) -> None:
    (operator.config_dir / "mcec.log").write_text("operator log line\n")
    async with mcp(operator) as session:
        handoff = await provision(session, mcpServer=False)
    check_handoff(handoff, operator, http=False)
    check_session_files(handoff, http=False)
    texts = [p.read_text(errors="replace") for p in Path(handoff["directory"]).iterdir() if p.name != "mcec"]
    assert not any("operator log line" in t for t in texts), "the operator's log was copied"
    provisioned = audit_with(operator, "session-provisioned", handoff["sessionId"])
    assert len(provisioned) == 1 and "by=agent" in provisioned[0], provisioned


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_copy_serves_every_catalogue_tool_but_launch_and_provisioning(operator: Copy, transport: str) -> None:
    async with mcp(operator) as session:
        handoff = await provision(session, mcpServer=transport == "http")
    sess = session_copy(operator, handoff)
    # A copy never provisions, so it does not offer `provision-session` either.
    full = sorted(set(catalogue_of(Path(handoff["directory"]))) - {"launch", "provision-session"})
    if transport == "stdio":
        async with mcp(sess) as session:
            names = [t.name for t in (await session.list_tools()).tools]
    else:
        with running_host(sess, handoff["port"], handoff["token"]), anyio.fail_after(HANG_GUARD_S):
            async with sdk_http(handoff["mcpEndpoint"], {"Authorization": handoff["authorization"]}) as (s, _):
                names = [t.name for t in (await s.list_tools()).tools]
    assert sorted(names) == full, f"missing {sorted(set(full) - set(names))}, extra {sorted(set(names) - set(full))}"


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["manual", "installed"])
async def test_provisioning_needs_the_opt_in(tmp_path: Path, kind: str) -> None:
    if kind == "manual":
        op = manual_copy(tmp_path / "op", settings="AgentCommandsEnabled = true\n")
    else:
        op = installed_copy(tmp_path / "op")
    async with mcp(op) as session:
        for args in ({}, {"mcpServer": False}, {"commands": ["capture"]}):
            env = await call(session, "provision-session", **args)
            assert error_code(env) == "provisioning-not-authorized", env
            assert "AllowSessionProvisioning" in env["error"]["detail"], env
    assert session_dirs(op) == []


# --------------------------------------------------------------------------- 2-3. HTTP copy, end-session


@pytest.mark.anyio
async def test_http_copy_bearer_and_teardown(operator: Copy) -> None:
    async with mcp(operator) as session:
        handoff = await provision(session)
    sid, token, port = handoff["sessionId"], handoff["token"], handoff["port"]
    directory = Path(handoff["directory"])
    sess = session_copy(operator, handoff)

    with running_host(sess, port, token) as host:
        # The bearer works (the surface itself: test_copy_serves_every_catalogue_tool_but_launch_and_provisioning).
        with anyio.fail_after(HANG_GUARD_S):
            async with sdk_http(handoff["mcpEndpoint"], {"Authorization": handoff["authorization"]}) as (s, init):
                assert init.server_info.name == "mcec"
                assert "session-status" in [t.name for t in (await s.list_tools()).tools]
                status = await call(s, "session-status")
                assert status["ok"] is True, status
        # Without it, or with a wrong one: 401 before anything is served.
        body = json.dumps(rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                             "clientInfo": {"name": "t", "version": "0"}})).encode()
        assert raw_http(port, body=body).status == 401
        assert raw_http(port, body=body, headers={"Authorization": f"Bearer {token}x"}).status == 401
        assert raw_http(port, body=body, headers={"Authorization": "Bearer " + "0" * len(token)}).status == 401
        assert raw_http(port, body=body, headers={"Authorization": token}).status == 401
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            with pytest.raises(Exception), anyio.fail_after(HANG_GUARD_S):  # noqa: B017 - any SDK failure
                async with sdk_http(handoff["mcpEndpoint"], headers) as (s, _):
                    await s.list_tools()

        async with mcp(operator) as session:
            # Wrong token: refused, directory intact.
            before = tree_snapshot(directory)
            env = await end(session, sid, "f" * len(token))
            assert error_code(env) == "session-token-invalid", env
            env = await end(session, sid, token[:-1])
            assert error_code(env) == "session-token-invalid", env
            assert tree_snapshot(directory) == before
            # Right token while the copy runs: session-running, still intact.
            env = await end(session, sid, token)
            assert error_code(env) == "session-running", env
            assert (directory / "mcec").is_file() and (directory / "mcec.settings").is_file()
            assert host.proc.poll() is None, "end-session must not stop the running copy"

    assert host.proc.returncode is not None
    async with mcp(operator) as session:
        env = await end(session, sid, token)
        assert env["ok"] is True and env["result"] == {"sessionId": sid, "removed": True}, env
        assert not directory.exists()
        env = await end(session, sid, token)
        assert env["ok"] is True, env
        assert env["result"] == {"sessionId": sid, "removed": True, "alreadyGone": True}, env


@pytest.mark.anyio
async def test_end_session_bad_arguments(operator: Copy) -> None:
    async with mcp(operator) as session:
        handoff = await provision(session, mcpServer=False)
        sid, token = handoff["sessionId"], handoff["token"]
        bad_ids = ["..", "../x", sid.upper(), handoff["directory"], f"{sid}/..", f"../{sid}", "", sid[:11],
                   sid + "0", f" {sid}", "0123456789ag"]
        for bad in bad_ids:
            env = await end(session, bad, token)
            assert error_code(env) == "bad-arguments", (bad, env)
            assert "sessionId" in env["error"]["detail"], (bad, env)
        for blank in ("", "   ", "\t"):
            env = await end(session, sid, blank)
            assert error_code(env) == "bad-arguments", (blank, env)
            assert "token" in env["error"]["detail"], env
        env = await call(session, "end-session", sessionId=sid)
        assert error_code(env) == "bad-arguments" and "token" in env["error"]["detail"], env
        env = await call(session, "end-session", sessionId=sid, token=12345)
        assert error_code(env) == "bad-arguments" and "token" in env["error"]["detail"], env
        assert Path(handoff["directory"]).is_dir(), "nothing removed by a refused call"
        env = await end(session, sid, token)
        assert env["ok"] is True, env


# --------------------------------------------------------------------------- 4. lock and port


@pytest.mark.anyio
async def test_second_instance_refuses_while_lock_is_held(operator: Copy, raw_servers: list[RawStdio]) -> None:
    async with mcp(operator) as session:
        handoff = await provision(session)
    sess = session_copy(operator, handoff)
    with running_host(sess, handoff["port"], handoff["token"]) as host:
        for args in (["mcp"], []):
            code, stderr = run_to_exit(sess, args)
            assert code != 0, stderr
            assert "another instance is already running" in stderr, stderr
            assert handoff["directory"] in stderr, stderr
        assert host.proc.poll() is None, "the first instance keeps running"
    # Once it stopped, the copy starts again (the lock died with the process).
    server = start_stdio(sess, raw_servers)
    assert server.proc.poll() is None


@pytest.mark.anyio
async def test_taken_port_fails_at_start_naming_the_port(operator: Copy) -> None:
    async with mcp(operator) as session:
        handoff = await provision(session)
    port = handoff["port"]
    squatter = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        squatter.bind(("127.0.0.1", port))
        squatter.listen(1)
        code, stderr = run_to_exit(session_copy(operator, handoff), [])
    finally:
        squatter.close()
    assert code != 0, stderr
    assert str(port) in stderr, stderr
    assert "port" in stderr.lower(), stderr


# --------------------------------------------------------------------------- 5. reaper


@pytest.mark.anyio
async def test_reaper_removes_backdated_sessions_but_not_running_ones(
    operator: Copy, raw_servers: list[RawStdio]
) -> None:
    async with mcp(operator) as session:
        stale = await provision(session, mcpServer=False)
        running = await provision(session, mcpServer=False)
        fresh = await provision(session, mcpServer=False)
    start_stdio(session_copy(operator, running), raw_servers)
    backdate(Path(stale["directory"]), THIRTEEN_HOURS)
    backdate(Path(running["directory"]), THIRTEEN_HOURS)

    # The next launch of `mcec mcp` (any copy) reaps before serving.
    start_stdio(operator, raw_servers)
    assert not Path(stale["directory"]).exists()
    assert Path(running["directory"]).is_dir() and Path(fresh["directory"]).is_dir()
    reaped = [ln for ln in operator.log().splitlines() if "AGENT-AUDIT: session-reaped" in ln]
    assert len(reaped) == 1 and stale["sessionId"] in reaped[0], reaped
    assert "AGENT-AUDIT: reap-summary; removed=1 skipped_running=1" in operator.log()

    # `mcec sessions reap` does the same on demand.
    another = json.loads(run_cli(operator, ["provision", "--no-mcp-server", "--json"])[1])
    backdate(Path(another["directory"]), THIRTEEN_HOURS)
    code, out, err = run_cli(operator, ["sessions", "reap", "--json"])
    assert code == 0, err
    report = json.loads(out)
    assert report["removed"] == [another["sessionId"]], report
    assert report["skippedRunning"] == [running["sessionId"]], report
    assert not Path(another["directory"]).exists()
    assert Path(running["directory"]).is_dir() and Path(fresh["directory"]).is_dir()


@pytest.mark.anyio
async def test_killed_session_is_collected_after_it_ages_out(operator: Copy, raw_servers: list[RawStdio]) -> None:
    async with mcp(operator) as session:
        handoff = await provision(session, mcpServer=False)
    directory = Path(handoff["directory"])
    server = start_stdio(session_copy(operator, handoff), raw_servers)
    listed = json.loads(run_cli(operator, ["sessions", "list", "--json"])[1])
    assert [s["running"] for s in listed if s["id"] == handoff["sessionId"]] == [True], listed
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(timeout=HANG_GUARD_S)

    listed = json.loads(run_cli(operator, ["sessions", "list", "--json"])[1])
    assert [s["running"] for s in listed if s["id"] == handoff["sessionId"]] == [False], listed
    # Not old yet: kept.
    code, out, _ = run_cli(operator, ["sessions", "reap", "--json"])
    assert code == 0 and json.loads(out)["removed"] == []
    assert directory.is_dir()
    # Aged out: the next pass collects it although it never shut down cleanly.
    backdate(directory, THIRTEEN_HOURS)
    code, out, err = run_cli(operator, ["sessions", "reap", "--json"])
    assert code == 0, err
    assert json.loads(out)["removed"] == [handoff["sessionId"]]
    assert not directory.exists()


# --------------------------------------------------------------------------- 6. symlinks


@pytest.mark.anyio
@pytest.mark.parametrize("how", ["end-session", "sessions-rm", "reaper"])
async def test_planted_symlinks_do_not_lead_teardown_outside(operator: Copy, tmp_path: Path, how: str) -> None:
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "precious.txt").write_text("keep me")
    (outside / "dir" / "inner.txt").write_text("keep me too")
    before = tree_snapshot(outside)
    async with mcp(operator) as session:
        handoff = await provision(session, mcpServer=False)
        directory = Path(handoff["directory"])
        (directory / "link-to-file").symlink_to(outside / "precious.txt")
        (directory / "link-to-dir").symlink_to(outside / "dir")
        (directory / "sub").mkdir()
        (directory / "sub" / "deep-link").symlink_to(outside)
        if how == "end-session":
            env = await end(session, handoff["sessionId"], handoff["token"])
            assert env["ok"] is True and env["result"].get("alreadyGone") is None, env
    if how == "sessions-rm":
        code, out, err = run_cli(operator, ["sessions", "rm", handoff["sessionId"]])
        assert code == 0, (out, err)
    elif how == "reaper":
        backdate(directory, THIRTEEN_HOURS)
        code, out, err = run_cli(operator, ["sessions", "reap"])
        assert code == 0, (out, err)
    assert not directory.exists() and not directory.is_symlink()
    assert tree_snapshot(outside) == before


# --------------------------------------------------------------------------- 7. concurrency


@pytest.mark.anyio
async def test_twenty_concurrent_provisions_and_teardowns(operator: Copy) -> None:
    handoffs: list[dict] = []
    teardowns: list[dict] = []

    async def one_server(count: int) -> None:
        async with mcp(operator) as session:
            mine: list[dict] = []

            async def prov(i: int) -> None:
                mine.append(await provision(session, mcpServer=bool(i % 2)))

            async with anyio.create_task_group() as tg:
                for i in range(count):
                    tg.start_soon(prov, i)
            handoffs.extend(mine)

            async def tear(h: dict) -> None:
                teardowns.append(await end(session, h["sessionId"], h["token"]))

            async with anyio.create_task_group() as tg:
                for h in mine:
                    tg.start_soon(tear, h)

    # Two servers (two processes racing on the filesystem), ten concurrent calls each.
    async with anyio.create_task_group() as tg:
        tg.start_soon(one_server, 10)
        tg.start_soon(one_server, 10)

    ids = [h["sessionId"] for h in handoffs]
    assert len(ids) == 20 and len(set(ids)) == 20, ids
    assert len({h["token"] for h in handoffs}) == 20
    assert len({h["directory"] for h in handoffs}) == 20
    assert all(t["ok"] is True and t["result"] == {"sessionId": t["result"]["sessionId"], "removed": True}
               for t in teardowns), teardowns
    assert sorted(t["result"]["sessionId"] for t in teardowns) == sorted(ids)
    leftovers = [p.name for p in sessions_root(operator).iterdir() if p.name != ".mcec-sessions.lock"]
    assert leftovers == [], leftovers
