"""Settings files from outside: a broken file keeps the process serving with the agent
surface off (fail closed), names file, line and key, and is never rewritten; unknown keys
only warn. An installed copy reads $XDG_CONFIG_HOME/mcec/, serves only the bootstrap tools
over stdio and refuses to start the HTTP front door."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from mcec_e2e import (
    Copy,
    audit_lines,
    free_port,
    host_settings,
    installed_copy,
    manual_copy,
    run_to_exit,
    sdk_envelope,
    sdk_stderr,
    sdk_stdio,
)

BROKEN_SETTINGS = [
    pytest.param('McpHttpPort = 5151\nAgentCommandsEnabled = "yes"\n', 2, "AgentCommandsEnabled", id="wrong-type"),
    pytest.param("AgentCommandsEnabled = true\nMcpHttpPort = 70000\n", 2, "McpHttpPort", id="port-out-of-range"),
    pytest.param("AgentCommandsEnabled = true\nthis is not toml\n", 2, None, id="not-toml"),
]


def snapshot(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


@pytest.mark.anyio
@pytest.mark.parametrize(("text", "line", "key"), BROKEN_SETTINGS)
async def test_broken_settings_fail_closed_and_are_not_rewritten(
    tmp_path: Path, text: str, line: int, key: str | None
) -> None:
    copy = manual_copy(tmp_path / "c", settings=text, commands=("capture",))
    before = snapshot(copy.settings_path)
    async with sdk_stdio(copy) as (session, init):
        assert init.server_info.name == "mcec"
        names = {t.name for t in (await session.list_tools()).tools}
        assert "session-status" not in names and "capture" not in names
        for name in ["session-status", "capture", "click", "frobnicate"]:
            result = await session.call_tool(name, {})
            env = sdk_envelope(result)
            assert result.is_error is True
            assert env["error"]["code"] == "agent-commands-disabled", (name, env)
        await session.send_ping()
    stderr = sdk_stderr(copy)
    error_lines = [ln for ln in stderr.splitlines() if str(copy.settings_path) in ln and f"line {line}" in ln]
    assert error_lines, stderr
    if key:
        assert any(key in ln for ln in error_lines), error_lines
    assert snapshot(copy.settings_path) == before
    # The error reaches the log file too.
    assert str(copy.settings_path) in copy.log()


@pytest.mark.anyio
async def test_broken_commands_file_fails_closed(tmp_path: Path) -> None:
    copy = manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = true\n")
    copy.commands_path.write_text('[session-status]\nEnabled = true\n[capture]\nEnabled = "yes"\n')
    before = snapshot(copy.commands_path)
    async with sdk_stdio(copy) as (session, _):
        env = sdk_envelope(await session.call_tool("session-status", {}))
        assert env["error"]["code"] == "agent-commands-disabled", env
    stderr = sdk_stderr(copy)
    assert any(str(copy.commands_path) in ln and "capture.Enabled" in ln for ln in stderr.splitlines()), stderr
    assert snapshot(copy.commands_path) == before


@pytest.mark.anyio
async def test_unknown_keys_warn_but_do_not_stop_anything(tmp_path: Path) -> None:
    copy = manual_copy(tmp_path / "c", settings='Colour = "blue"\nAgentCommandsEnabled = true\nFutureThing = 3\n')
    copy.commands_path.write_text("[capture]\nEnabled = true\nShiny = true\n[frobnicate]\nEnabled = true\n")
    before = snapshot(copy.settings_path)
    async with sdk_stdio(copy) as (session, _):
        result = await session.call_tool("session-status", {})
        assert result.is_error is False, sdk_envelope(result)
    stderr = sdk_stderr(copy)
    warn = [ln for ln in stderr.splitlines() if "WARN" in ln]
    for word in ["Colour", "FutureThing", "Shiny", "frobnicate"]:
        assert any(word in ln for ln in warn), (word, warn)
    assert snapshot(copy.settings_path) == before


@pytest.mark.anyio
async def test_settings_are_read_beside_the_executable_not_the_cwd(tmp_path: Path) -> None:
    copy = manual_copy(tmp_path / "c", settings="AgentCommandsEnabled = false\n")
    # A settings file in the working directory (copy.root) and in $XDG_CONFIG_HOME must not count.
    (copy.root / "mcec.settings").write_text("AgentCommandsEnabled = true\n")
    xdg = copy.root / "xdg-config" / "mcec"
    xdg.mkdir(parents=True)
    (xdg / "mcec.settings").write_text("AgentCommandsEnabled = true\n")
    async with sdk_stdio(copy) as (session, _):
        env = sdk_envelope(await session.call_tool("session-status", {}))
        assert env["error"]["code"] == "agent-commands-disabled", env
    assert copy.log_path.exists()
    assert not (copy.root / "mcec.log").exists()


# --------------------------------------------------------------------------- installed copy


def enable_everything(copy: Copy) -> None:
    """Settings that would turn on the whole surface for a manual copy."""
    copy.write_settings("AgentCommandsEnabled = true\n")
    copy.enable_commands("capture", "click", "displays")


@pytest.mark.anyio
async def test_installed_copy_over_stdio_is_bootstrap_only(tmp_path: Path) -> None:
    copy = installed_copy(tmp_path / "i")
    enable_everything(copy)
    # Settings beside the installed binary are not this copy's settings.
    (copy.exe.parent / "mcec.settings").write_text("AgentCommandsEnabled = true\n")
    async with sdk_stdio(copy) as (session, init):
        assert init.server_info.name == "mcec"
        names = sorted(t.name for t in (await session.list_tools()).tools)
        assert names == ["end-session", "provision-session"]
        for name, args in [("session-status", {}), ("click", {"at": {"x": 1, "y": 1}}), ("capture", {}), ("nope", {})]:
            result = await session.call_tool(name, args)
            env = sdk_envelope(result)
            assert result.is_error is True
            assert env["error"]["code"] == "bootstrap-only", (name, env)
            assert env["error"]["category"] == "refused"
            assert "provision-session" in env["error"]["detail"]
        # The meta tools pass gate 2 and answer with their own gates (or `unavailable`
        # until provisioning lands), never bootstrap-only.
        env = sdk_envelope(await session.call_tool("provision-session", {}))
        assert env.get("error", {}).get("code") != "bootstrap-only", env
        await session.send_ping()
    log = copy.log()
    assert "bootstrap-only" in log, f"expected the log in {copy.config_dir}"
    assert len([ln for ln in audit_lines(log) if "bootstrap-only" in ln]) == 4
    assert not (copy.exe.parent / "mcec.log").exists()


@pytest.mark.anyio
async def test_installed_copy_found_through_a_symlink_is_still_installed(tmp_path: Path) -> None:
    copy = installed_copy(tmp_path / "i")
    enable_everything(copy)
    link_dir = tmp_path / "elsewhere"
    link_dir.mkdir()
    (link_dir / "mcec").symlink_to(copy.exe)
    (link_dir / "mcec.settings").write_text("AgentCommandsEnabled = true\n")
    linked = Copy(root=copy.root, exe=link_dir / "mcec", config_dir=copy.config_dir, extra_env=copy.extra_env)
    async with sdk_stdio(linked) as (session, _):
        env = sdk_envelope(await session.call_tool("session-status", {}))
        assert env["error"]["code"] == "bootstrap-only", env


def test_installed_copy_refuses_to_start_http(tmp_path: Path) -> None:
    copy = installed_copy(tmp_path / "i")
    port = free_port()
    copy.write_settings(host_settings(port))
    rc, stderr = run_to_exit(copy, [])
    assert rc != 0
    assert "provision" in stderr.lower(), stderr
    assert "installed" in stderr.lower(), stderr
    assert "panicked" not in stderr
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_manual_copy_with_the_same_settings_does_serve_http(tmp_path: Path, host_factory) -> None:
    """The control for the test above: only the install location differs."""
    port = free_port()
    copy = manual_copy(tmp_path / "m", settings=host_settings(port))
    host = host_factory(copy, port)
    assert host.proc.poll() is None


def test_extra_prefixes_can_list_several_directories(tmp_path: Path) -> None:
    copy = installed_copy(tmp_path / "i")
    port = free_port()
    copy.write_settings(host_settings(port))
    prefixes = os.pathsep.join([str(tmp_path / "nothing-here"), copy.extra_env["MCEC_EXTRA_INSTALL_PREFIXES"]])
    rc, stderr = run_to_exit(copy, [], {"MCEC_EXTRA_INSTALL_PREFIXES": prefixes})
    assert rc != 0 and "provision" in stderr.lower(), stderr


@pytest.mark.anyio
@pytest.mark.parametrize("typo", ["McpAuthtoken", "mcpauthtoken", "McpAuthTokn"])
async def test_a_misspelled_key_fails_closed_with_did_you_mean(tmp_path: Path, typo: str) -> None:
    port = free_port()
    copy = manual_copy(tmp_path / "c", settings=host_settings(port) + f'{typo} = "secret-token-0123456789abcdef0123"\n')
    async with sdk_stdio(copy) as (session, _):
        env = sdk_envelope(await session.call_tool("session-status", {}))
        assert env["error"]["code"] == "agent-commands-disabled", env
    assert "did you mean `McpAuthToken`?" in sdk_stderr(copy), sdk_stderr(copy)
    # Positive control: spelled right, the same file turns the surface on.
    copy.write_settings(host_settings(port) + 'McpAuthToken = "secret-token-0123456789abcdef0123"\n')
    async with sdk_stdio(copy) as (session, _):
        env = sdk_envelope(await session.call_tool("session-status", {}))
        assert env["ok"] is True, env
