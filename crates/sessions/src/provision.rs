//! `provision-session`: make a session copy of mcec, ready for an agent.
//!
//! A session is `<sessions root>/<id>/` (0700) holding a copy of the running executable
//! (`mcec`, 0700; a reflink of it where the file system allows, which shares its blocks
//! copy-on-write, else a copy of the bytes: the audit line says `exe=reflink` or `exe=copy`),
//! a co-located `mcec.settings` and `mcec.commands` (0600, each written to a
//! temporary file and renamed into place) and the creation stamp. Because the copy runs from a
//! non-installed location it reads that co-located config with no flags.
//!
//! Only the executable is copied: the Linux binary needs no sibling files, and copying nothing
//! else guarantees the operator's `mcec.settings`, `mcec.commands` and `*.log` never leak into
//! a session and the sessions root is never recursed into.
//!
//! Provisioning is all or nothing, and a session becomes visible only when complete: it is
//! built in `<root>/.mcec-building-<random>` (locked by the provision while it works, so the
//! reaper leaves it alone), then renamed to `<root>/<id>` in one step that never replaces an
//! existing entry. `sessions rm`, `end-session` and the reaper never see a half-made session.
//! If a step fails the build directory is removed and the caller gets
//! [`ProvisionError::Failed`]; if even that removal fails, [`ProvisionError::LeftBehind`] names
//! the directory, which the reaper removes later.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs::DirBuilder;
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use mcec_rules::audit::audit;
use mcec_rules::{ErrorCode, ToolError};
use serde::Serialize;

use crate::id::SessionId;
use crate::os::CopyWay;
use crate::paths::{COMMANDS_FILE, EXE_NAME, SETTINGS_FILE};
use crate::reaper::{REAP_AGE, reap};
use crate::remove::{BUILDING_PREFIX, Removal, lock_building_dir, remove_scratch_dir, scratch_name};
use crate::token::SessionToken;
use mcec_rules::command_lang::RawKind;
use mcec_rules::own_display::{OwnDisplaySize, check_room};

/// Most entries `commands` may hold.
pub const MAX_COMMANDS: usize = 256;
/// The one tool provisioning never enables.
pub const NEVER_PROVISIONED: &str = "launch";
/// The loopback address every session binds.
pub const SESSION_BIND_ADDRESS: &str = "127.0.0.1";
/// Used when the caller passes an empty operator hotkey.
pub const DEFAULT_HOTKEY: &str = "Ctrl+Alt+Shift+S";

/// What to provision.
#[derive(Debug, Clone)]
pub struct ProvisionRequest {
    /// Normally [`crate::paths::XdgDirs::sessions_root`].
    pub sessions_root: PathBuf,
    /// The running executable, copied as the session's `mcec`.
    pub source_exe: PathBuf,
    /// Whether the copy starts its HTTP front door (`McpServerEnabled`).
    pub mcp_server: bool,
    /// Tools to enable; `None` means every tool except `launch`.
    pub commands: Option<Vec<String>>,
    /// The full tool surface of this build (provision-session/end-session included or not).
    pub all_tool_names: Vec<String>,
    /// The operator's own `EmergencyStopHotkey`, carried into the session.
    pub operator_hotkey: String,
    /// Who asked, for the audit line: `agent` (the default), `operator-cli`, `operator-ui`.
    pub requested_by: &'static str,
    /// An X display of the session's own, of this size (issue 26); `None`: the operator's.
    pub own_display: Option<OwnDisplaySize>,
    /// `OwnDisplaySessionsMax` of the provisioning copy: own-display sessions at most.
    pub own_display_sessions_max: u32,
}

impl ProvisionRequest {
    /// The same request, audited as made by `who`.
    pub fn by(self, who: &'static str) -> Self {
        ProvisionRequest { requested_by: who, ..self }
    }

    /// The same request with an own display of `size` (`None`: the operator's), under the
    /// provisioning copy's `OwnDisplaySessionsMax`.
    pub fn with_own_display(self, size: Option<OwnDisplaySize>, sessions_max: u32) -> Self {
        ProvisionRequest { own_display: size, own_display_sessions_max: sessions_max, ..self }
    }
}

/// The handoff: everything the agent needs to run, reach and end its session.
#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Handoff {
    pub session_id: SessionId,
    pub directory: PathBuf,
    pub exe_path: PathBuf,
    pub working_dir: PathBuf,
    pub token: String,
    /// A shell command line that starts the copy.
    pub launch: String,
    pub teardown: String,
    pub mcp_server_enabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bind_address: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_endpoint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authorization: Option<String>,
    /// Requested commands that were not enabled, and why.
    pub warnings: Vec<String>,
    /// The session's own display, when it has one: `{own: true, width, height}` (its number
    /// is chosen when the copy starts; the copy's `session-status` says it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub desktop: Option<HandoffDesktop>,
}

/// The handoff's `desktop`: the session acts on an X display of its own of this size.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct HandoffDesktop {
    pub own: bool,
    pub width: u32,
    pub height: u32,
}

impl fmt::Debug for Handoff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handoff")
            .field("session_id", &self.session_id)
            .field("directory", &self.directory)
            .field("launch", &self.launch)
            .field("mcp_server_enabled", &self.mcp_server_enabled)
            .field("port", &self.port)
            .field("token", &"<redacted>")
            .field("warnings", &self.warnings)
            .finish_non_exhaustive()
    }
}

/// Why provisioning refused or failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProvisionError {
    /// The request itself is unacceptable (nothing was touched on disk).
    BadArguments { field: &'static str, problem: String },
    /// Another own-display session would pass `OwnDisplaySessionsMax` (nothing was touched).
    Limit(String),
    /// A step failed; the partial directory has been removed. The text names the step.
    Failed(String),
    /// A step failed and the partial directory `left` (in the sessions root, not a session)
    /// could not be removed; the reaper removes it later.
    LeftBehind { cause: String, left: PathBuf },
}

impl ProvisionError {
    /// The error an agent sees.
    pub fn to_tool_error(&self) -> ToolError {
        match self {
            ProvisionError::BadArguments { field, problem } => ToolError::bad_argument(field, problem),
            ProvisionError::Limit(why) => {
                ToolError::new(ErrorCode::Unavailable, format!("No session was provisioned: {why}."))
            }
            ProvisionError::Failed(cause) => ToolError::new(
                ErrorCode::ProvisioningFailed,
                format!("Provisioning failed and nothing was left behind: {cause}."),
            ),
            ProvisionError::LeftBehind { cause, left } => ToolError::new(
                ErrorCode::ProvisioningFailed,
                format!(
                    "Provisioning failed: {cause}. A partial directory {} was left in the sessions \
                     root (it is not a session); the reaper removes it, or the operator with `mcec \
                     sessions reap`.",
                    left.display()
                ),
            ),
        }
    }
}

impl fmt::Display for ProvisionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProvisionError::BadArguments { field, problem } => write!(f, "`{field}`: {problem}"),
            ProvisionError::Limit(why) => write!(f, "no session was provisioned: {why}"),
            ProvisionError::Failed(cause) => write!(f, "provisioning failed: {cause}"),
            ProvisionError::LeftBehind { cause, left } => {
                write!(
                    f,
                    "provisioning failed: {cause}; the partial directory {} is left for the reaper",
                    left.display()
                )
            }
        }
    }
}

impl std::error::Error for ProvisionError {}

/// Which tools a session enables, and what the agent should hear about its request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandPlan {
    /// Every known tool name and whether it is enabled.
    pub enabled: BTreeMap<String, bool>,
    pub warnings: Vec<String>,
}

fn shown(name: &str) -> String {
    format!("`{}`", mcec_rules::text::ellipsize(name, 64))
}

/// Sub-switches a provisioned copy gets only when the agent's `commands` list names them
/// (reading the clipboard is sensitive): never by default.
const ONLY_WHEN_ASKED: &[&str] = &["clipboard.read"];

/// Decides the `mcec.commands` table. More than [`MAX_COMMANDS`] entries is `bad-arguments`;
/// everything else the agent asked for is honoured where possible and explained otherwise:
/// an empty name, a repeated name, an unknown name and `launch` each add a warning (duplicates
/// are harmless, so they are collapsed rather than refused).
pub fn plan_commands(requested: Option<&[String]>, all: &[String]) -> Result<CommandPlan, ProvisionError> {
    let known: BTreeSet<&str> = all
        .iter()
        .map(String::as_str)
        .chain(ONLY_WHEN_ASKED.iter().copied())
        .filter(|n| !n.is_empty())
        .collect();
    let mut warnings = Vec::new();
    let wanted: BTreeSet<&str> = match requested {
        None => known
            .iter()
            .copied()
            .filter(|n| *n != NEVER_PROVISIONED && !ONLY_WHEN_ASKED.contains(n))
            .collect(),
        Some(list) => {
            if list.len() > MAX_COMMANDS {
                return Err(ProvisionError::BadArguments {
                    field: "commands",
                    problem: format!("has {} entries; at most {MAX_COMMANDS} are allowed", list.len()),
                });
            }
            let mut seen = BTreeSet::new();
            let mut wanted = BTreeSet::new();
            for name in list {
                let name = name.as_str();
                if name.trim().is_empty() {
                    warnings.push("an empty command name was ignored".to_string());
                } else if !seen.insert(name) {
                    warnings.push(format!("{} was listed more than once", shown(name)));
                } else if name == NEVER_PROVISIONED {
                    warnings.push(format!("{} is never enabled in a session copy", shown(name)));
                } else if !known.contains(name) {
                    warnings.push(format!("unknown command {} was ignored", shown(name)));
                } else {
                    wanted.insert(name);
                }
            }
            if wanted.is_empty() {
                warnings.push("no command is enabled in this session".to_string());
            }
            wanted
        }
    };
    let enabled = known.iter().map(|n| (n.to_string(), wanted.contains(n))).collect();
    Ok(CommandPlan { enabled, warnings })
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct SessionSettings<'a> {
    agent_commands_enabled: bool,
    act_as_server: bool,
    mcp_server_enabled: bool,
    mcp_bind_address: &'a str,
    mcp_http_port: u16,
    mcp_auth_token: &'a str,
    allow_session_provisioning: bool,
    emergency_stop_enabled: bool,
    command_overlay_enabled: bool,
    emergency_stop_hotkey: &'a str,
    /// `OwnDisplay = "WxH"` (`mcec_rules::settings::OWN_DISPLAY_KEY`), only in a session with
    /// a display of its own.
    #[serde(rename = "OwnDisplay", skip_serializing_if = "Option::is_none")]
    own_display: Option<String>,
}

#[derive(Serialize)]
struct CommandEntry {
    #[serde(rename = "Enabled")]
    enabled: bool,
}

/// A loopback port that was free a moment ago (bind port 0, read it, release it).
pub fn free_loopback_port() -> std::io::Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(listener.local_addr()?.port())
}

/// Provisions a session now. See the module doc.
pub fn provision(req: ProvisionRequest) -> Result<Handoff, ProvisionError> {
    provision_at(req, SystemTime::now())
}

/// [`provision`] with the clock given (the creation stamp and the pre-provision reap use it).
pub fn provision_at(req: ProvisionRequest, now: SystemTime) -> Result<Handoff, ProvisionError> {
    let plan = plan_commands(req.commands.as_deref(), &req.all_tool_names)?;
    let report = reap(&req.sessions_root, REAP_AGE, now);
    tracing::debug!(removed = report.removed.len(), "pre-provision reap done");
    let root = prepare_root(&req.sessions_root).map_err(ProvisionError::Failed)?;
    // Held until this function returns, so the new session is in place before another counts.
    let _room = match req.own_display {
        Some(_) => {
            let room = crate::own_display::RoomLock::take(&root).map_err(ProvisionError::Failed)?;
            let existing = crate::own_display::count_own_display_sessions(&root);
            check_room(existing, req.own_display_sessions_max).map_err(ProvisionError::Limit)?;
            Some(room)
        }
        None => None,
    };
    let id = SessionId::generate()
        .map_err(|e| ProvisionError::Failed(format!("no OS randomness for the id: {e}")))?;
    let (build, build_lock) = create_build_dir(&root).map_err(ProvisionError::Failed)?;
    let result = fill_session(&req, &plan, &id, &build, now).and_then(|(mut handoff, way)| {
        place(&build, &root, &id)?;
        let dir = root.join(id.as_str());
        handoff.exe_path = dir.join(EXE_NAME);
        handoff.launch = launch_line(&handoff.exe_path, req.mcp_server);
        handoff.directory = dir.clone();
        handoff.working_dir = dir;
        Ok((handoff, way))
    });
    drop(build_lock);
    match result {
        Ok((handoff, way)) => {
            audit(
                "session-provisioned",
                &format!(
                    "session={id} by={} dir={} mcpServer={} commands_enabled={} exe={} display={}",
                    req.requested_by,
                    handoff.directory.display(),
                    req.mcp_server,
                    plan.enabled.values().filter(|e| **e).count(),
                    way.as_str(),
                    req.own_display.map_or_else(|| "operator".to_string(), |size| format!("own:{size}"))
                ),
            );
            Ok(handoff)
        }
        Err(cause) => {
            audit("provision-failed", &format!("session={id} by={} cause={cause}", req.requested_by));
            let name = build.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            match remove_scratch_dir(&root, &name) {
                Ok(Removal::Removed | Removal::AlreadyGone) => Err(ProvisionError::Failed(cause)),
                Err(e) => {
                    tracing::error!(session = %id, "could not remove a failed provision's directory: {e}");
                    Err(ProvisionError::LeftBehind { cause, left: build })
                }
            }
        }
    }
}

/// Creates `<root>/.mcec-building-<random>` (0700) and locks it for the provision.
fn create_build_dir(root: &Path) -> Result<(PathBuf, std::fs::File), String> {
    let name =
        scratch_name(BUILDING_PREFIX, None).map_err(|e| format!("cannot name a build directory: {e}"))?;
    let dir = root.join(name);
    crate::os::private_dir(&mut DirBuilder::new())
        .create(&dir)
        .map_err(|e| format!("cannot create a session directory in {}: {e}", root.display()))?;
    match lock_building_dir(&dir) {
        Ok(lock) => Ok((dir, lock)),
        Err(e) => {
            let _ = std::fs::remove_dir(&dir);
            Err(format!("cannot lock the new session directory: {e}"))
        }
    }
}

/// Renames the complete build directory to `<root>/<id>`, never replacing anything there.
fn place(build: &Path, root: &Path, id: &SessionId) -> Result<(), String> {
    let dest = root.join(id.as_str());
    crate::os::rename_no_replace(build, &dest)
        .map_err(|e| format!("cannot move the session into place as {id}: {e}"))?;
    sync_dir(root)
}

/// Creates the sessions root (0700) if needed and returns its real path.
fn prepare_root(root: &Path) -> Result<PathBuf, String> {
    match std::fs::metadata(root) {
        Ok(m) if !m.is_dir() => {
            return Err(format!("the sessions root {} exists but is not a directory", root.display()));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            crate::os::private_dir(DirBuilder::new().recursive(true))
                .create(root)
                .map_err(|e| format!("cannot create the sessions root {}: {e}", root.display()))?;
        }
        Err(e) => return Err(format!("cannot use the sessions root {}: {e}", root.display())),
    }
    root.canonicalize().map_err(|e| format!("cannot resolve the sessions root {}: {e}", root.display()))
}

/// Writes everything into the build directory `dir`. The handoff's paths are fixed up by the
/// caller once the directory has its final name.
fn fill_session(
    req: &ProvisionRequest,
    plan: &CommandPlan,
    id: &SessionId,
    dir: &Path,
    now: SystemTime,
) -> Result<(Handoff, CopyWay), String> {
    crate::stamp::write_stamp(dir, now).map_err(|e| format!("cannot write the creation stamp: {e}"))?;
    let exe = dir.join(EXE_NAME);
    let way = copy_executable(&req.source_exe, &exe)?;

    let port = free_loopback_port().map_err(|e| format!("no free loopback port: {e}"))?;
    let token = SessionToken::generate().map_err(|e| format!("no OS randomness for the token: {e}"))?;
    write_atomic(dir, SETTINGS_FILE, settings_text(req, id, port, &token)?.as_bytes())?;
    write_atomic(dir, COMMANDS_FILE, commands_text(plan, id)?.as_bytes())?;
    sync_dir(dir)?;
    Ok((handoff(req, plan, id, dir, exe, port, &token), way))
}

/// The session copy's `mcec.settings`: agent surface on, provisioning off, its own port and token.
fn settings_text(
    req: &ProvisionRequest,
    id: &SessionId,
    port: u16,
    token: &SessionToken,
) -> Result<String, String> {
    let hotkey = match req.operator_hotkey.trim() {
        "" => DEFAULT_HOTKEY,
        h => h,
    };
    let settings = SessionSettings {
        agent_commands_enabled: true,
        act_as_server: false,
        mcp_server_enabled: req.mcp_server,
        mcp_bind_address: SESSION_BIND_ADDRESS,
        mcp_http_port: port,
        mcp_auth_token: token.expose(),
        allow_session_provisioning: false,
        emergency_stop_enabled: true,
        command_overlay_enabled: true,
        emergency_stop_hotkey: hotkey,
        own_display: req.own_display.map(|size| size.to_string()),
    };
    Ok(format!(
        "# Written by mcec for session copy {id}. Deleted with the session.\n{}",
        toml::to_string(&settings).map_err(|e| format!("cannot encode the settings: {e}"))?
    ))
}

/// The session copy's `mcec.commands`: every tool of this build, enabled as `plan` says.
fn commands_text(plan: &CommandPlan, id: &SessionId) -> Result<String, String> {
    let commands: BTreeMap<&str, CommandEntry> = plan
        .enabled
        .iter()
        .filter(|(name, _)| !ONLY_WHEN_ASKED.contains(&name.as_str()))
        .map(|(name, on)| (name.as_str(), CommandEntry { enabled: *on }))
        .collect();
    let mut commands_text = format!(
        "# Written by mcec for session copy {id}. `launch` is never enabled here.\n{}",
        toml::to_string(&commands).map_err(|e| format!("cannot encode the commands: {e}"))?
    );
    // Enabling `send_command` means enabling its raw command kinds too; each has its own switch.
    if plan.enabled.get("send_command") == Some(&true) {
        for kind in RawKind::ALL {
            commands_text.push_str(&format!("\n[send_command.{}]\nEnabled = true\n", kind.as_str()));
        }
    }
    for sub in ONLY_WHEN_ASKED.iter().filter(|n| plan.enabled.get(**n) == Some(&true)) {
        commands_text.push_str(&format!("\n[{sub}]\nEnabled = true\n"));
    }
    Ok(commands_text)
}

/// What the agent is told about the session copy in `dir` (the caller fixes the paths after
/// moving it into place).
fn handoff(
    req: &ProvisionRequest,
    plan: &CommandPlan,
    id: &SessionId,
    dir: &Path,
    exe: PathBuf,
    port: u16,
    token: &SessionToken,
) -> Handoff {
    let launch = launch_line(&exe, req.mcp_server);
    let http = req.mcp_server;
    Handoff {
        session_id: *id,
        directory: dir.to_path_buf(),
        exe_path: exe,
        working_dir: dir.to_path_buf(),
        launch,
        teardown: format!(
            "When done, stop the session's mcec process, then call end-session with \
             {{\"sessionId\": \"{id}\", \"token\": <the token above>}}; its directory is deleted."
        ),
        mcp_server_enabled: http,
        bind_address: http.then(|| SESSION_BIND_ADDRESS.to_string()),
        port: http.then_some(port),
        mcp_endpoint: http.then(|| format!("http://{SESSION_BIND_ADDRESS}:{port}/mcp")),
        authorization: http.then(|| format!("Bearer {}", token.expose())),
        token: token.expose().to_string(),
        warnings: plan.warnings.clone(),
        desktop: req.own_display.map(|size| HandoffDesktop {
            own: true,
            width: size.width,
            height: size.height,
        }),
    }
}

/// The shell command that starts the copy at `exe`.
fn launch_line(exe: &Path, mcp_server: bool) -> String {
    let exe_text = crate::os::shell_quote(&exe.to_string_lossy());
    if mcp_server { exe_text } else { format!("{exe_text} mcp") }
}

/// Copies the running executable to `dest` (a reflink where the file system allows it).
fn copy_executable(source: &Path, dest: &Path) -> Result<CopyWay, String> {
    let meta = std::fs::metadata(source)
        .map_err(|e| format!("cannot read the running executable {}: {e}", source.display()))?;
    if !meta.is_file() {
        return Err(format!("the running executable {} is not a regular file", source.display()));
    }
    let way = crate::os::clone_or_copy(source, dest)
        .map_err(|e| format!("cannot copy the executable {}: {e}", source.display()))?;
    crate::os::private_executable(dest).map_err(|e| format!("cannot set the copy's permissions: {e}"))?;
    tracing::debug!(way = way.as_str(), bytes = meta.len(), "session executable in place");
    Ok(way)
}

/// Writes `dir/name` via a temporary file (0600) in the same directory and a rename, so a
/// reader sees either no file or the whole file.
fn write_atomic(dir: &Path, name: &str, contents: &[u8]) -> Result<(), String> {
    crate::atomic::write_atomic(dir, name, contents).map_err(|e| format!("cannot write {name}: {e}"))
}

fn sync_dir(dir: &Path) -> Result<(), String> {
    crate::os::sync_dir(dir).map_err(|e| format!("cannot flush the session directory: {e}"))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn default_plan_enables_all_but_launch() {
        let plan = plan_commands(None, &names(&["click", "launch", "screenshot"])).expect("plan");
        assert_eq!(plan.enabled.get("click"), Some(&true));
        assert_eq!(plan.enabled.get("screenshot"), Some(&true));
        assert_eq!(plan.enabled.get("launch"), Some(&false));
        assert_eq!(
            plan.enabled.get("clipboard.read"),
            Some(&false),
            "reading the clipboard is never a default"
        );
        assert!(plan.warnings.is_empty());
        let asked =
            plan_commands(Some(&names(&["click", "clipboard.read"])), &names(&["click"])).expect("plan");
        assert_eq!(asked.enabled.get("clipboard.read"), Some(&true));
    }

    #[test]
    fn requested_plan_warns_about_everything_it_drops() {
        let all = names(&["click", "launch", "screenshot", "type"]);
        let req = names(&["click", "click", "", "launch", "bogus", "type"]);
        let plan = plan_commands(Some(&req), &all).expect("plan");
        assert_eq!(plan.enabled.get("click"), Some(&true));
        assert_eq!(plan.enabled.get("type"), Some(&true));
        assert_eq!(plan.enabled.get("screenshot"), Some(&false));
        assert_eq!(plan.enabled.get("launch"), Some(&false));
        assert!(!plan.enabled.contains_key("bogus"));
        assert_eq!(plan.enabled.get("clipboard.read"), Some(&false), "off unless asked for");
        let w = plan.warnings.join("\n");
        assert!(w.contains("`click` was listed more than once"), "{w}");
        assert!(w.contains("empty command name"), "{w}");
        assert!(w.contains("`launch` is never enabled"), "{w}");
        assert!(w.contains("unknown command `bogus`"), "{w}");
        assert_eq!(plan.warnings.len(), 4);
    }

    #[test]
    fn too_many_commands_is_bad_arguments() {
        let all = names(&["click"]);
        let ok = vec!["click".to_string(); MAX_COMMANDS];
        assert!(plan_commands(Some(&ok), &all).is_ok());
        let many = vec!["click".to_string(); 10_000];
        let e = plan_commands(Some(&many), &all).expect_err("refused");
        assert_eq!(e.to_tool_error().code, ErrorCode::BadArguments);
        assert!(e.to_string().contains("10000"));
    }

    #[test]
    fn empty_request_warns_that_nothing_is_enabled() {
        let plan = plan_commands(Some(&[]), &names(&["click"])).expect("plan");
        assert_eq!(plan.enabled.get("click"), Some(&false));
        assert_eq!(plan.warnings, vec!["no command is enabled in this session"]);
    }

    #[test]
    fn long_names_are_truncated_in_warnings() {
        let long = "x".repeat(5000);
        let plan = plan_commands(Some(&[long]), &names(&["click"])).expect("plan");
        assert!(plan.warnings[0].len() < 200);
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(
            crate::os::shell_quote("/home/op/.local/state/mcec/sessions/0a/mcec"),
            "/home/op/.local/state/mcec/sessions/0a/mcec"
        );
        assert_eq!(crate::os::shell_quote("/home/o p/mcec"), "'/home/o p/mcec'");
        assert_eq!(crate::os::shell_quote("/it's"), r"'/it'\''s'");
    }

    #[test]
    fn a_failure_that_left_something_says_so() {
        let gone = ProvisionError::Failed("disk full".into()).to_tool_error();
        assert!(gone.detail.contains("nothing was left behind"), "{}", gone.detail);
        let left = ProvisionError::LeftBehind {
            cause: "disk full".into(),
            left: PathBuf::from("/r/.mcec-building-ab"),
        }
        .to_tool_error();
        assert_eq!(left.code, ErrorCode::ProvisioningFailed);
        assert!(!left.detail.contains("nothing was left behind"), "{}", left.detail);
        assert!(
            left.detail.contains(".mcec-building-ab") && left.detail.contains("reaper"),
            "{}",
            left.detail
        );
    }

    #[test]
    fn free_port_is_nonzero() {
        assert_ne!(free_loopback_port().expect("port"), 0);
    }
}
