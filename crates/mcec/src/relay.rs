//! `mcec mcp --session`: one config entry for any MCP client, a fresh session copy for every
//! connection.
//!
//! With the operator's opt-in (`AllowSessionProvisioning`) this process provisions a session
//! (the same `mcec-sessions` code as `provision-session`), marks it as relayed
//! ([`RelayMark`]), starts the copy's `mcec mcp` from the session directory and copies bytes
//! between the client and the copy in both directions. It parses nothing, serves no tool and
//! never logs what passes through. When the client hangs up (stdin closes) the copy sees its
//! own stdin close and exits; a signal is passed on to it. Then the session is ended through
//! `end-session`'s rules (token checked, removed only once the copy no longer runs). If the
//! relay dies without that (kill -9), its mark is no longer locked and the next reaper pass
//! removes the session once the copy has exited.
//!
//! Without the opt-in (or with a settings error, or inside a provisioned copy) the client gets
//! the bootstrap-only surface, with a first instructions line saying what the operator must do.

use std::io::{Read, Write};
use std::process::{Child, Command, ExitCode, Stdio};

use anyhow::{Context, Result, anyhow};
use mcec_mcp::audit::audit;
use mcec_rules::own_display::OwnDisplaySize;
use mcec_sessions::paths::McecPaths;
use mcec_sessions::provision::{Handoff, provision};
use mcec_sessions::relay_mark::RelayMark;
use mcec_sessions::teardown::end_session;

use crate::config::{self, Loaded};
use crate::serve::{self, Mode};
use crate::{handoff, logging};

pub fn run(own_display: Option<OwnDisplaySize>) -> ExitCode {
    let paths = match McecPaths::for_current_process() {
        Ok(paths) => paths,
        Err(e) => {
            eprintln!("mcec: cannot work out where this copy keeps its files: {e}");
            return ExitCode::from(2);
        }
    };
    let loaded = config::load(&paths.settings_file(), &paths.commands_file());
    if !may_provision(&paths, &loaded) {
        return serve::run(Mode::SessionBootstrap);
    }
    if let Some(warning) = logging::init(Some(&paths.log_file())) {
        tracing::warn!("{warning}");
    }
    match relay(&paths, &loaded, own_display) {
        Ok(code) => code,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("mcec: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn may_provision(paths: &McecPaths, loaded: &Loaded) -> bool {
    loaded.error.is_none() && loaded.settings.allow_session_provisioning && paths.session.is_none()
}

/// The first line of the instructions when `--session` cannot provision.
pub fn bootstrap_note(paths: &McecPaths, loaded: &Loaded) -> String {
    let settings = paths.settings_file();
    let why = if paths.session.is_some() {
        "this is a provisioned session copy, which never provisions further sessions; configure the \
         operator's own mcec instead"
            .to_string()
    } else if loaded.error.is_some() {
        format!("the operator's settings file {} has an error; the operator must fix it", settings.display())
    } else {
        format!(
            "the operator has not allowed session provisioning; they must set `AllowSessionProvisioning = \
             true` in {} (or tick it in the Settings window of `mcec`)",
            settings.display()
        )
    };
    format!(
        "`mcec mcp --session` gives each connection its own disposable session copy, but {why}, then \
         reconnect. Until then only provision-session and end-session are listed."
    )
}

fn relay(paths: &McecPaths, loaded: &Loaded, own_display: Option<OwnDisplaySize>) -> Result<ExitCode> {
    let request = handoff::request(
        &paths.sessions_root,
        &paths.exe,
        &loaded.settings.emergency_stop_hotkey,
        false,
        None,
    )
    .with_own_display(
        loaded.settings.session_display.own_display(own_display),
        loaded.settings.own_display_sessions_max,
    );
    let handoff =
        provision(request).map_err(|e| anyhow!("cannot provision a session for this connection: {e}"))?;
    let id = handoff.session_id;
    tracing::info!("relaying this connection to session {}", id.as_str());
    let outcome = RelayMark::take(&handoff.directory)
        .context("cannot mark the session as relayed")
        .and_then(|mark| Ok((mark, start_copy(&handoff)?)))
        .and_then(|(mark, child)| Ok((mark, relay_until_exit(child)?)));
    end(paths, &handoff);
    let (_mark, code) = outcome?;
    Ok(code)
}

fn start_copy(handoff: &Handoff) -> Result<Child> {
    Command::new(&handoff.exe_path)
        .arg("mcp")
        .current_dir(&handoff.working_dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start the session copy {}", handoff.exe_path.display()))
}

/// Pump both directions until the copy exits; a signal to the relay is passed on to it.
fn relay_until_exit(mut child: Child) -> Result<ExitCode> {
    let (Some(to_copy), Some(from_copy)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(anyhow!("the session copy has no stdio pipes"));
    };
    pump_thread("mcec-relay-in", std::io::stdin(), to_copy)?;
    let out = pump_thread("mcec-relay-out", from_copy, std::io::stdout())?;
    let pid = child.id();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let status = runtime.block_on(async move {
        let mut waiter = tokio::task::spawn_blocking(move || child.wait());
        tokio::select! {
            status = &mut waiter => status,
            signal = serve::termination() => {
                audit("shutdown", &format!("signal={signal}; the session copy is stopped"));
                terminate(pid);
                waiter.await
            }
        }
    })??;
    // Everything the copy wrote reaches the client before the relay goes.
    let _ = out.join();
    Ok(if status.success() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

#[cfg(unix)]
fn terminate(pid: u32) {
    let target = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw);
    if let Some(target) = target
        && let Err(e) = rustix::process::kill_process(target, rustix::process::Signal::TERM)
    {
        tracing::warn!("cannot stop the session copy (pid {pid}): {e}");
    }
}

/// Windows has no SIGTERM to ask with: the copy is ended with `TerminateProcess`. Its
/// instance lock goes with it, and `end` removes the session as on Unix.
#[cfg(windows)]
#[allow(unsafe_code, reason = "OpenProcess/TerminateProcess are how one process ends another on Windows")]
fn terminate(pid: u32) {
    use windows_sys::Win32::Foundation::CloseHandle;
    use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_TERMINATE, TerminateProcess};
    // SAFETY: OpenProcess takes plain values; a null handle is checked before any use.
    let handle = unsafe { OpenProcess(PROCESS_TERMINATE, 0, pid) };
    if handle.is_null() {
        tracing::warn!("cannot stop the session copy (pid {pid}): {}", std::io::Error::last_os_error());
        return;
    }
    // SAFETY: `handle` is a valid process handle opened above and closed exactly once here.
    unsafe {
        if TerminateProcess(handle, 1) == 0 {
            tracing::warn!("cannot stop the session copy (pid {pid}): {}", std::io::Error::last_os_error());
        }
        CloseHandle(handle);
    }
}

/// Copy bytes from `from` to `to` on a thread of its own until `from` ends; then `to` is
/// dropped (closing the copy's stdin when that is where it writes).
fn pump_thread(
    name: &str,
    from: impl Read + Send + 'static,
    to: impl Write + Send + 'static,
) -> Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || pump(from, to))
        .with_context(|| format!("cannot start {name}"))
}

fn pump(mut from: impl Read, mut to: impl Write) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        if to.write_all(&buf[..n]).and_then(|()| to.flush()).is_err() {
            return;
        }
    }
}

/// End the session the way `end-session` does; the reaper covers a failure.
fn end(paths: &McecPaths, handoff: &Handoff) {
    let id = handoff.session_id.as_str();
    match end_session(&paths.sessions_root, id, &handoff.token) {
        Ok(_) => tracing::info!("the connection to session {id} is over"),
        Err(e) => tracing::warn!("session {id} left for the reaper: {e}"),
    }
}
