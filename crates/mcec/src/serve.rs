//! Starting a serving process: `mcec mcp` (stdio) or the host (`mcec`, HTTP when
//! `McpServerEnabled`). Both share the start-up: paths, logs, settings, the instance lock of
//! a session copy, and the [`Agent`] every transport serves. Both also end on the operator's
//! attested End from the display's console ([`AgentEnd`]; what it does is
//! `mcec_rules::guard::EndEffect`): a session copy then deletes its session as `end-session`
//! does, once its instance lock is released.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};
use mcec_desktop::requests::ImageFormat;
use mcec_desktop::{CaptureDefaults, DesktopTools};
use mcec_mcp::http::HttpConfig;
use mcec_mcp::tools::{SessionServices, ToolServices};
use mcec_mcp::{Agent, AgentConfig, audit::audit};
use mcec_operator::Surfaces;
use mcec_rules::guard::EndEffect;
use mcec_rules::latch::Latch;
use mcec_rules::settings::{CaptureFormat, Settings, UNSAFE_WAYLAND_KEY};
use mcec_rules::stop_plan::StopPlan;
use mcec_sessions::lock::InstanceLock;
use mcec_sessions::paths::McecPaths;
use mcec_sessions::reaper::REAP_AGE;

use crate::agent_tab::AgentTabConfig;
use crate::config::{self, Loaded};
use crate::logging;
use crate::operator_side::{AgentEnd, OperatorSide, Plan, UiShutdown, Who};
use crate::tool_display::ToolDisplay;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Stdio,
    Host,
    /// `mcec mcp --session` without the operator's opt-in: stdio, the bootstrap-only surface,
    /// and instructions that say what the operator must do (see `relay.rs`).
    SessionBootstrap,
}

impl Mode {
    fn stdio(self) -> bool {
        matches!(self, Mode::Stdio | Mode::SessionBootstrap)
    }
}

/// Serve until the transport ends, then exit once the operator windows have closed (see
/// [`crate::operator_side::UiShutdown`]).
pub fn run(mode: Mode) -> ExitCode {
    let mut ui = None;
    let code = match start(mode, &mut ui) {
        Ok(()) => 0,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("{}", logging::redacted_text(&format!("mcec: {e:#}")));
            2
        }
    };
    match ui {
        Some(ui) => crate::operator_side::exit_after_ui(Some(&ui), code),
        None => ExitCode::from(code),
    }
}

fn start(mode: Mode, ui: &mut Option<UiShutdown>) -> Result<()> {
    let (paths, loaded) = load(mode)?;
    let lock = match paths.session {
        Some(_) => Some(InstanceLock::acquire(&paths.exe_dir).with_context(|| {
            format!("cannot start: another instance is already running from {}", paths.exe_dir.display())
        })?),
        None => None,
    };
    // Every launch collects sessions that aged out; running ones hold their lock and are kept.
    mcec_sessions::reaper::reap(&paths.sessions_root, REAP_AGE, SystemTime::now());
    let settings = &loaded.settings;
    crate::platform::log_desktop();
    // A session with a display of its own starts it first (ended when `own` drops, last, or
    // before the session is deleted after the operator's End).
    let (tools, own) = own_display(&paths, &loaded);
    let plan = Plan { tools: tools.clone(), ..operator_plan(mode, &paths, &loaded) };
    let mut side = OperatorSide::bring_up(plan);
    *ui = side.ui_shutdown();
    // A session copy can never provision: the agent must not widen its own rights.
    let allow_provisioning = Arc::new(AtomicBool::new(
        loaded.error.is_none() && loaded.settings.allow_session_provisioning && paths.session.is_none(),
    ));
    let note = (mode == Mode::SessionBootstrap).then(|| crate::relay::bootstrap_note(&paths, &loaded));
    let agent = Arc::new(build_agent(&paths, &loaded, &mut side, allow_provisioning.clone(), note, &tools));
    if side.desktop.is_some() {
        agent.with_record(|r| r.desktop = crate::platform::desktop_found());
    }
    if let (ToolDisplay::Own(desk), Some(desktop)) = (&tools, &side.desktop) {
        agent.with_record(|r| r.own_display = Some((desk.display.clone(), desk.size)));
        title_own_window(desktop, &paths, &agent);
    }
    crate::reload::spawn(
        crate::reload::Watch {
            settings_file: paths.settings_file(),
            commands_file: paths.commands_file(),
            session_copy: paths.session.is_some(),
            allow_provisioning: allow_provisioning.clone(),
        },
        agent.clone(),
        loaded.settings.clone(),
    );
    let agent_tab = (mode == Mode::Host).then(|| AgentTabConfig {
        config_dir: paths.config_dir.clone(),
        sessions_root: paths.sessions_root.clone(),
        exe: paths.exe.clone(),
        in_session_copy: paths.session.is_some(),
        allow_provisioning,
        operator_hotkey: settings.emergency_stop_hotkey.clone(),
        settings_error: loaded.error.as_ref().map(ToString::to_string),
        session_display: settings.session_display,
        own_display_sessions_max: settings.own_display_sessions_max,
    });
    let desktop = side.desktop.clone();
    let latch = side.latch.clone();
    let stop_record = side.stop_record();
    let end = side.agent_end();
    let effect = EndEffect::of(paths.session.is_some(), if mode.stdio() { "stdio" } else { "http" });
    side.run(agent.clone(), agent_tab);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let served = match mode {
        Mode::Stdio | Mode::SessionBootstrap => runtime.block_on(async {
            tokio::select! {
                served = mcec_mcp::stdio::serve_stdio(agent.clone()) => {
                    served.context("the MCP client did not complete initialization")
                }
                signal = termination() => {
                    audit("shutdown", &format!("signal={signal}"));
                    Ok(())
                }
                () = end.wait() => {
                    audit("shutdown", "ended by the operator; the agent's connection closes");
                    Ok(())
                }
            }
        }),
        Mode::Host => runtime.block_on(host(agent.clone(), &loaded, &end, effect)),
    };
    stop_hands(&agent, runtime, desktop.as_deref(), &latch);
    // Before `own` drops: a headless own display's record must not be written back once gone.
    stop_record.retire();
    if end.is_ended()
        && effect == EndEffect::SessionEnded
        && let Some(id) = &paths.session
    {
        // Released first: `end-session` removes no session whose instance still holds it.
        #[cfg_attr(windows, allow(clippy::drop_non_drop, reason = "no own display on Windows"))]
        drop(own);
        drop(lock);
        end_own_session(&paths, &loaded, id.as_str());
    }
    served
}

/// The operator ended this session copy's agent: delete the session as `end-session` does
/// (the same token-checked teardown, with the copy's own token); the reaper covers a failure.
fn end_own_session(paths: &McecPaths, loaded: &Loaded, id: &str) {
    let Some(token) = loaded.settings.auth_token() else {
        tracing::warn!("session {id} left for the reaper: its settings hold no token");
        return;
    };
    match mcec_sessions::teardown::end_session(&paths.sessions_root, id, token) {
        Ok(_) => tracing::info!("session {id} ended by the operator and deleted"),
        Err(e) => tracing::warn!("session {id} left for the reaper: {e}"),
    }
}

/// Where this copy keeps its files, its logging, and its settings (reported, the token never
/// logged). An installed copy refuses to serve HTTP here, before anything else starts.
fn load(mode: Mode) -> Result<(McecPaths, Loaded)> {
    let paths =
        McecPaths::for_current_process().context("cannot work out where this copy keeps its files")?;
    if let Some(warning) = logging::init(Some(&paths.log_file())) {
        tracing::warn!("{warning}");
    }
    let loaded = config::load(&paths.settings_file(), &paths.commands_file());
    if let Some(token) = loaded.settings.auth_token() {
        logging::never_log(token);
    }
    report_config(&loaded);
    tracing::info!(
        "mcec {} starting ({mode:?}); config dir {}; installed copy: {}",
        env!("CARGO_PKG_VERSION"),
        paths.config_dir.display(),
        paths.installed
    );
    if paths.installed && mode == Mode::Host && loaded.settings.mcp_server_enabled {
        bail!(
            "this is an installed copy of mcec ({}), which never serves agents over HTTP. \
             Let an agent call provision-session (after you enable AllowSessionProvisioning), run \
             `mcec provision`, or copy the binary to a directory you own and run it from there",
            paths.exe.display()
        );
    }
    Ok((paths, loaded))
}

/// The display the tools act on, and the own display kept running while this process serves
/// (a session copy whose settings record `OwnDisplay`; never on Windows, where it is X11's).
#[cfg(unix)]
fn own_display(paths: &McecPaths, loaded: &Loaded) -> (ToolDisplay, Option<crate::own_display::OwnDisplay>) {
    crate::own_display::for_copy(paths, loaded.settings.own_display)
}

/// Titles a session's own display's window with its client's name, once known.
#[cfg(unix)]
fn title_own_window(desktop: &DesktopTools, paths: &McecPaths, agent: &Arc<Agent>) {
    if let (Some(window), Some(id)) = (desktop.session_window(), paths.session) {
        crate::own_display::title_after_client(window.clone(), id.to_string(), agent.clone());
    }
}

/// Own displays are X servers: there is none on Windows.
#[cfg(windows)]
fn title_own_window(_desktop: &DesktopTools, _paths: &McecPaths, _agent: &Arc<Agent>) {}

/// What a Windows copy has instead of an own display (never one).
#[cfg(windows)]
struct NoOwnDisplay;

#[cfg(windows)]
fn own_display(_paths: &McecPaths, loaded: &Loaded) -> (ToolDisplay, Option<NoOwnDisplay>) {
    if loaded.settings.own_display.is_some() {
        tracing::warn!("OwnDisplay needs X11 (Xephyr or Xvfb); this session acts on the Windows desktop");
    }
    (ToolDisplay::Operator, None)
}

/// The settings' `Capture*` keys as the desktop tools take them.
fn capture_defaults(settings: &Settings) -> CaptureDefaults {
    CaptureDefaults {
        max_long_side: settings.capture_max_long_side,
        max_pixels: u64::from(settings.capture_max_pixels),
        format: match settings.capture_format {
            CaptureFormat::Auto => ImageFormat::Auto,
            CaptureFormat::Png => ImageFormat::Png,
            CaptureFormat::Jpeg => ImageFormat::Jpeg,
        },
    }
}

/// What the operator side brings up for this mode and these settings.
fn operator_plan<'a>(mode: Mode, paths: &McecPaths, loaded: &'a Loaded) -> Plan<'a> {
    let settings = &loaded.settings;
    let agent_surface = loaded.agent_commands_enabled() || paths.installed;
    let plan = Plan {
        artifacts_dir: paths.artifacts_dir.clone(),
        stop: StopPlan::decide(
            settings.emergency_stop_enabled,
            match mode {
                Mode::Stdio | Mode::SessionBootstrap => true,
                Mode::Host => settings.mcp_server_enabled || settings.agent_commands_enabled,
            },
        ),
        hotkey_spec: &settings.emergency_stop_hotkey,
        surfaces: Surfaces {
            overlay: settings.command_overlay_enabled && agent_surface,
            prompt: mode.stdio(),
            host_window: mode == Mode::Host,
        },
        // Like the provisioning opt-in, never honoured in a copy an agent drives.
        unsafe_without_stop_on_wayland: settings.unsafe_allow_actuation_without_stop_on_wayland
            && paths.session.is_none(),
        capture: capture_defaults(settings),
        tools: ToolDisplay::Operator,
        who: Who {
            session: paths.session.as_ref().map(ToString::to_string),
            transport: if mode.stdio() { "stdio" } else { "http" },
            host: mode == Mode::Host,
        },
    };
    if settings.unsafe_allow_actuation_without_stop_on_wayland && paths.session.is_some() {
        tracing::warn!("{UNSAFE_WAYLAND_KEY} is ignored in a session copy");
    }
    plan
}

/// The process is going away: calls in flight stop at their next step, queued ones never
/// run, and whatever is still held is released before the process exits. A stop pressed just
/// before the client hung up finishes its steps first (its record and its audit line).
fn stop_hands(
    agent: &Agent,
    runtime: tokio::runtime::Runtime,
    desktop: Option<&DesktopTools>,
    latch: &Latch,
) {
    if !latch.wait_settled(SHUTDOWN_WAIT) {
        tracing::warn!("exiting before the stop worker finished a stop's steps (waited {SHUTDOWN_WAIT:?})");
    }
    agent.shut_down();
    // Tool calls run on blocking threads; each aborts within one step once the flag is set.
    runtime.shutdown_timeout(SHUTDOWN_WAIT);
    if let Some(desktop) = desktop
        && let Err(e) = desktop.emergency_release()
    {
        tracing::warn!("releasing input at exit: {e}");
    }
}

/// How long exit waits for calls in flight to notice the shutdown.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(2);

/// Resolves with the signal's name on SIGINT, SIGTERM or SIGHUP.
#[cfg(unix)]
pub(crate) async fn termination() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut hup)) = (signal(SignalKind::terminate()), signal(SignalKind::hangup())) else {
        tracing::warn!("cannot watch SIGTERM/SIGHUP; only Ctrl+C shuts down cleanly");
        let _ = tokio::signal::ctrl_c().await;
        return "SIGINT";
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => "SIGINT",
        _ = term.recv() => "SIGTERM",
        _ = hup.recv() => "SIGHUP",
    }
}

/// Resolves with the console event's name on Ctrl+C, Ctrl+Break, the console window's close,
/// logoff or shutdown (Windows gives a handler about 5 s after a close before it ends the
/// process, enough for the clean exit).
#[cfg(windows)]
pub(crate) async fn termination() -> &'static str {
    use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close, ctrl_logoff, ctrl_shutdown};
    let (Ok(mut int), Ok(mut brk), Ok(mut close), Ok(mut logoff), Ok(mut shutdown)) =
        (ctrl_c(), ctrl_break(), ctrl_close(), ctrl_logoff(), ctrl_shutdown())
    else {
        tracing::warn!("cannot watch the console's events; only Ctrl+C shuts down cleanly");
        let _ = tokio::signal::ctrl_c().await;
        return "CTRL_C_EVENT";
    };
    tokio::select! {
        _ = int.recv() => "CTRL_C_EVENT",
        _ = brk.recv() => "CTRL_BREAK_EVENT",
        _ = close.recv() => "CTRL_CLOSE_EVENT",
        _ = logoff.recv() => "CTRL_LOGOFF_EVENT",
        _ = shutdown.recv() => "CTRL_SHUTDOWN_EVENT",
    }
}

fn report_config(loaded: &Loaded) {
    for warning in &loaded.warnings {
        tracing::warn!("{warning}");
    }
    if let Some(error) = &loaded.error {
        tracing::error!("{error}");
        audit("settings-error", "agent surface off until the settings file is fixed");
    }
}

fn build_agent(
    paths: &McecPaths,
    loaded: &Loaded,
    side: &mut OperatorSide,
    allow_provisioning: Arc<AtomicBool>,
    instructions_note: Option<String>,
    tools: &ToolDisplay,
) -> Agent {
    let (agent_commands_enabled, commands) = crate::reload::surface(loaded, paths.session.is_some());
    let bootstrap = instructions_note.is_some();
    let ask_first = loaded.ask_first && agent_commands_enabled && !bootstrap && !paths.installed;
    if ask_first {
        tracing::info!(
            "no {} here: \"ask\" mode, the agent asks for each command and you allow it in a prompt",
            paths.settings_file().display()
        );
    }
    let config = AgentConfig {
        run_id: new_run_id(),
        stop: side.stop_flag(),
        // The bootstrap surface of `--session` is the installed copy's, whatever copy this is.
        installed_copy: paths.installed || bootstrap,
        session_copy: paths.session.is_some(),
        instructions_note: instructions_note
            .or_else(|| ask_first.then(|| mcec_mcp::ASK_FIRST_NOTE.to_string())),
        agent_commands_enabled,
        commands,
        desktop_gate: side.gate.clone(),
    };
    let sessions = SessionServices {
        sessions_root: paths.sessions_root.clone(),
        source_exe: paths.exe.clone(),
        allow_provisioning,
        operator_hotkey: loaded.settings.emergency_stop_hotkey.clone(),
        own_display_sessions_max: loaded.settings.own_display_sessions_max,
        session_display: loaded.settings.session_display,
    };
    let a11y = side.desktop.clone().map(|desktop| crate::platform::a11y_tools(desktop, tools));
    let agent =
        Agent::new(config, ToolServices { sessions: Some(sessions), desktop: side.desktop.clone(), a11y })
            .with_consent_asker(side.consent_asker());
    match side.observer() {
        Some(observer) => agent.with_observer(observer),
        None => agent,
    }
}

/// 12 lowercase hex characters from the OS random source.
fn new_run_id() -> String {
    let mut bytes = [0u8; 6];
    if getrandom::fill(&mut bytes).is_err() {
        bytes = (std::process::id() as u64).to_le_bytes()[..6].try_into().unwrap_or_default();
    }
    hex::encode(bytes)
}

/// Serve HTTP until a signal, or until the operator's End: then the front door closes (its
/// connections end) and, unless `effect` says the process exits (a session copy, which is
/// then deleted), it stays with its window and its stop until a signal or Quit.
async fn host(agent: Arc<Agent>, loaded: &Loaded, end: &Arc<AgentEnd>, effect: EndEffect) -> Result<()> {
    let settings = &loaded.settings;
    if !settings.mcp_server_enabled {
        tracing::info!("McpServerEnabled is false: no HTTP front door; waiting for Ctrl+C");
        termination().await;
        return Ok(());
    }
    let token = settings.auth_token().map(str::to_string);
    let ip = mcec_rules::http_gate::check_bind(&settings.mcp_bind_address, token.as_deref())
        .map_err(anyhow::Error::msg)?;
    let addr = SocketAddr::new(ip, settings.mcp_http_port);
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| {
        format!("cannot listen on {addr} (McpHttpPort {}): is the port taken?", settings.mcp_http_port)
    })?;
    tracing::info!(
        "MCP over HTTP on http://{addr}/mcp ({})",
        if token.is_some() {
            "every request needs McpAuthToken as its bearer"
        } else {
            "no McpAuthToken set"
        }
    );
    let config =
        HttpConfig { port: settings.mcp_http_port, token, allowed_hosts: settings.mcp_allowed_hosts.clone() };
    // On a signal, stop the hands first: a drag in flight aborts at its next step instead of
    // running to its end while the front door drains its connections.
    let stopping = agent.clone();
    let ended = end.clone();
    let shutdown = async move {
        tokio::select! {
            signal = termination() => {
                audit("shutdown", &format!("signal={signal}; calls in flight are stopped"));
            }
            () = ended.wait() => {
                audit("shutdown", "ended by the operator; the HTTP front door closes");
            }
        }
        stopping.shut_down();
    };
    mcec_mcp::http::serve_http(agent, listener, config, shutdown).await?;
    if end.is_ended() && !effect.exits() {
        tracing::info!("the agent was ended: no HTTP front door until mcec starts again; waiting for Ctrl+C");
        termination().await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use mcec_rules::settings::{Commands, SettingsError};
    use mcec_sessions::id::SessionId;

    use super::*;

    /// One combination of everything `operator_plan` reads.
    #[derive(Debug, Clone, Copy)]
    struct Inputs {
        mode: Mode,
        installed: bool,
        session_copy: bool,
        settings_error: bool,
        stop_enabled: bool,
        server_enabled: bool,
        agent_commands: bool,
        overlay_enabled: bool,
        unsafe_wayland: bool,
        /// No `mcec.settings` beside a manual copy: ask mode.
        ask_first: bool,
    }

    /// Every combination: three modes times nine switches.
    fn every_input() -> impl Iterator<Item = Inputs> {
        [Mode::Stdio, Mode::Host, Mode::SessionBootstrap].into_iter().flat_map(|mode| {
            (0u16..1 << 9).map(move |bits| {
                let on = |n: u16| bits & (1 << n) != 0;
                Inputs {
                    mode,
                    installed: on(0),
                    session_copy: on(1),
                    settings_error: on(2),
                    stop_enabled: on(3),
                    server_enabled: on(4),
                    agent_commands: on(5),
                    overlay_enabled: on(6),
                    unsafe_wayland: on(7),
                    ask_first: on(8),
                }
            })
        })
    }

    fn paths(i: Inputs) -> McecPaths {
        McecPaths {
            exe: PathBuf::from("/copy/mcec"),
            exe_dir: PathBuf::from("/copy"),
            installed: i.installed,
            config_dir: PathBuf::from("/copy"),
            sessions_root: PathBuf::from("/state/sessions"),
            artifacts_dir: PathBuf::from("/state/artifacts"),
            session: i.session_copy.then(|| SessionId::parse("0123456789ab").expect("a session id")),
        }
    }

    fn loaded(i: Inputs) -> Loaded {
        let settings = Settings {
            emergency_stop_enabled: i.stop_enabled,
            mcp_server_enabled: i.server_enabled,
            agent_commands_enabled: i.agent_commands,
            command_overlay_enabled: i.overlay_enabled,
            unsafe_allow_actuation_without_stop_on_wayland: i.unsafe_wayland,
            emergency_stop_hotkey: "Ctrl+Alt+F7".into(),
            ..Settings::default()
        };
        let error = i.settings_error.then(|| SettingsError {
            file: "mcec.commands".into(),
            line: Some(1),
            key: None,
            problem: "does not parse".into(),
        });
        Loaded {
            settings,
            commands: Commands::default(),
            error,
            warnings: Vec::new(),
            ask_first: i.ask_first,
        }
    }

    /// The contract's rows for `mcec` and `mcec mcp`, said independently of the code:
    /// `mcec mcp` (and its `--session` bootstrap) has the stop and the re-arm prompt, the host
    /// has its window (whose menu re-arms) and arms the stop when it serves agents at all (HTTP
    /// or agent commands); `EmergencyStopEnabled = false` never arms; the banner shows when
    /// `CommandOverlayEnabled` and an agent surface is on (agent commands, or ask mode, with
    /// readable settings, or the bootstrap tools of an installed copy); the Wayland escape hatch is
    /// never honoured in a session copy.
    #[test]
    fn every_combination_of_mode_and_settings_gets_the_contracts_plan() {
        let mut seen = 0;
        let mut armed = 0;
        for i in every_input() {
            let (paths, loaded) = (paths(i), loaded(i));
            let plan = operator_plan(i.mode, &paths, &loaded);
            let stdio = matches!(i.mode, Mode::Stdio | Mode::SessionBootstrap);
            let serves_agents = stdio || i.server_enabled || i.agent_commands;
            let arm_stop = plan.stop == StopPlan::Arm;
            assert_eq!(arm_stop, i.stop_enabled && serves_agents, "arm_stop for {i:?}");
            if i.stop_enabled && (stdio || i.server_enabled || (i.agent_commands && !i.settings_error)) {
                assert!(arm_stop, "something can act, so the stop must be armed: {i:?}");
            }
            // The reason a stop is not armed is the true one (issue 25).
            let want_stop = match (i.stop_enabled, serves_agents) {
                (true, true) => StopPlan::Arm,
                (false, serves_agents) => StopPlan::Disabled { serves_agents },
                (true, false) => StopPlan::NotNeeded,
            };
            assert_eq!(plan.stop, want_stop, "the stop plan for {i:?}");
            let agent_surface = ((i.agent_commands || i.ask_first) && !i.settings_error) || i.installed;
            let want = Surfaces {
                overlay: i.overlay_enabled && agent_surface,
                prompt: stdio,
                host_window: i.mode == Mode::Host,
            };
            assert_eq!(plan.surfaces, want, "surfaces for {i:?}");
            assert_eq!(
                plan.unsafe_without_stop_on_wayland,
                i.unsafe_wayland && !i.session_copy,
                "the Wayland escape hatch for {i:?}"
            );
            assert_eq!(plan.hotkey_spec, "Ctrl+Alt+F7", "{i:?}");
            assert_eq!(plan.artifacts_dir, paths.artifacts_dir, "{i:?}");
            assert_eq!(plan.capture, capture_defaults(&loaded.settings), "{i:?}");
            seen += 1;
            armed += usize::from(plan.stop == StopPlan::Arm);
        }
        assert_eq!(seen, 3 * 512, "every combination was checked");
        assert!(armed > 0 && armed < seen, "both verdicts occur: {armed} of {seen} armed");
    }
}
