//! Sessions on disk, end to end through the public API: provision, run (a held lock), end,
//! reap, list, and the bad inputs of issue 4. Unix only (it builds Linux copies, plants Unix
//! links and modes); the Windows file-system code is tested in `src/os/windows.rs` under Wine.

#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::{Arc, Barrier};
use std::time::{Duration, SystemTime};

use mcec_rules::ErrorCode;
use mcec_sessions::paths::{LOCK_FILE, STAMP_FILE};
use mcec_sessions::remove::ROOT_LOCK_FILE;
use mcec_sessions::{
    Handoff, McecPaths, ProvisionError, ProvisionRequest, REAP_AGE, TeardownError, XdgDirs, end_session,
    is_locked, list_sessions, provision, reap,
};

const TOOLS: &[&str] = &["click", "end-session", "launch", "provision-session", "screenshot", "type"];

struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    exe: PathBuf,
    outside: PathBuf,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().expect("tempdir");
    let build = tmp.path().join("build");
    std::fs::create_dir(&build).expect("mkdir");
    let exe = build.join("mcec");
    std::fs::write(&exe, b"#!/bin/sh\necho fake mcec\n").expect("write exe");
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    // Operator files beside the source executable must never reach a session.
    std::fs::write(build.join("mcec.settings"), "AllowSessionProvisioning = true\n").expect("w");
    std::fs::write(build.join("mcec.commands"), "[launch]\nEnabled = true\n").expect("w");
    std::fs::write(build.join("mcec.log"), "log\n").expect("w");
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).expect("mkdir");
    Env { root: tmp.path().join("state/mcec/sessions"), exe, outside, _tmp: tmp }
}

fn request(env: &Env, mcp_server: bool, commands: Option<Vec<&str>>) -> ProvisionRequest {
    ProvisionRequest {
        sessions_root: env.root.clone(),
        source_exe: env.exe.clone(),
        mcp_server,
        commands: commands.map(|c| c.into_iter().map(String::from).collect()),
        all_tool_names: TOOLS.iter().map(|s| s.to_string()).collect(),
        operator_hotkey: "Ctrl+Alt+Q".into(),
        requested_by: "test",
        own_display: None,
        own_display_sessions_max: mcec_rules::own_display::DEFAULT_SESSIONS_MAX,
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).expect("stat").permissions().mode() & 0o777
}

fn toml_file(path: &Path) -> toml::Table {
    toml::from_str(&std::fs::read_to_string(path).expect("read")).expect("toml")
}

/// Session directories in the root (the deleters' lock file is not one).
fn root_entries(root: &Path) -> Vec<String> {
    match std::fs::read_dir(root) {
        Ok(rd) => rd
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != ROOT_LOCK_FILE)
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Holds `<dir>/.mcec.lock` from another process, like a running copy would.
fn hold_lock_in_child(dir: &Path) -> Child {
    let child = Command::new("flock")
        .args(["--exclusive", "--no-fork"])
        .arg(dir.join(LOCK_FILE))
        .args(["sleep", "120"])
        .spawn()
        .expect("spawn flock (util-linux)");
    for _ in 0..500 {
        if is_locked(dir) {
            return child;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    kill_child(child);
    panic!("the child never took the lock");
}

fn kill_child(mut child: Child) {
    child.kill().expect("kill -9");
    child.wait().expect("reap child");
}

fn backdate(dir: &Path, age: Duration) {
    let when = SystemTime::now() - age;
    let secs = when.duration_since(SystemTime::UNIX_EPOCH).expect("epoch").as_secs();
    std::fs::write(dir.join(STAMP_FILE), format!("{secs}\n")).expect("backdate");
}

#[test]
fn http_session_has_the_contract_layout_and_config() {
    let env = env();
    let h = provision(request(&env, true, None)).expect("provision");
    let dir = &h.directory;
    assert!(dir.starts_with(env.root.canonicalize().expect("canon")));
    assert_eq!(h.session_id.as_str().len(), 12);
    assert_eq!(dir.file_name().and_then(|n| n.to_str()), Some(h.session_id.as_str()));

    let mut files = root_entries(dir);
    files.sort();
    assert_eq!(files, vec![".mcec-session", "mcec", "mcec.commands", "mcec.settings"]);
    assert_eq!(mode(dir), 0o700);
    assert_eq!(mode(&env.root), 0o700);
    assert_eq!(mode(&h.exe_path), 0o700);
    for f in ["mcec.settings", "mcec.commands", STAMP_FILE] {
        assert_eq!(mode(&dir.join(f)), 0o600, "{f}");
    }
    assert_eq!(std::fs::read(&h.exe_path).expect("read"), std::fs::read(&env.exe).expect("read"));

    let s = toml_file(&dir.join("mcec.settings"));
    let b = |k: &str| s.get(k).and_then(toml::Value::as_bool);
    assert_eq!(b("AgentCommandsEnabled"), Some(true));
    assert_eq!(b("ActAsServer"), Some(false));
    assert_eq!(b("McpServerEnabled"), Some(true));
    assert_eq!(b("AllowSessionProvisioning"), Some(false));
    assert_eq!(b("EmergencyStopEnabled"), Some(true));
    assert_eq!(b("CommandOverlayEnabled"), Some(true));
    assert_eq!(s.get("McpBindAddress").and_then(|v| v.as_str()), Some("127.0.0.1"));
    assert_eq!(s.get("EmergencyStopHotkey").and_then(|v| v.as_str()), Some("Ctrl+Alt+Q"));
    assert_eq!(s.get("McpAuthToken").and_then(|v| v.as_str()), Some(h.token.as_str()));
    let port = s.get("McpHttpPort").and_then(toml::Value::as_integer).expect("port");
    assert_eq!(Some(port), h.port.map(i64::from));

    let c = toml_file(&dir.join("mcec.commands"));
    let enabled = |k: &str| c.get(k).and_then(|t| t.get("Enabled")).and_then(toml::Value::as_bool);
    assert_eq!(enabled("click"), Some(true));
    assert_eq!(enabled("screenshot"), Some(true));
    assert_eq!(enabled("launch"), Some(false));

    assert!(h.token.len() >= 32 && h.token.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    let json = serde_json::to_value(&h).expect("json");
    for key in [
        "sessionId",
        "directory",
        "exePath",
        "workingDir",
        "token",
        "launch",
        "teardown",
        "mcpServerEnabled",
        "bindAddress",
        "port",
        "mcpEndpoint",
        "authorization",
        "warnings",
    ] {
        assert!(json.get(key).is_some(), "handoff lacks {key}: {json}");
    }
    assert_eq!(json["mcpEndpoint"], format!("http://127.0.0.1:{port}/mcp"));
    assert_eq!(json["authorization"], format!("Bearer {}", h.token));
    assert_eq!(json["launch"], h.exe_path.to_string_lossy().as_ref());
    assert!(h.teardown.contains(h.session_id.as_str()) && !h.teardown.contains(&h.token));
    assert!(!format!("{h:?}").contains(&h.token), "Debug leaks the token");

    // The copy sees itself as a non-installed session copy reading its co-located config.
    let xdg = XdgDirs::from_vars(Path::new("/home/op"), None, None);
    assert!(!mcec_sessions::is_installed_copy_with(&h.exe_path, Some(Path::new("/home/op")), None));
    let paths = McecPaths::resolve(&h.exe_path, false, &xdg);
    assert_eq!(paths.session, Some(h.session_id));
    assert_eq!(&paths.config_dir, dir);
}

#[test]
fn stdio_session_omits_http_fields_and_honours_commands() {
    let env = env();
    let h = provision(request(&env, false, Some(vec!["click", "launch", "nope", "click", ""])))
        .expect("provision");
    let json = serde_json::to_value(&h).expect("json");
    for key in ["bindAddress", "port", "mcpEndpoint", "authorization"] {
        assert!(json.get(key).is_none(), "{key} present for stdio: {json}");
    }
    assert_eq!(json["mcpServerEnabled"], false);
    assert!(h.launch.ends_with("/mcec mcp"), "{}", h.launch);
    assert_eq!(h.warnings.len(), 4, "{:?}", h.warnings);
    let s = toml_file(&h.directory.join("mcec.settings"));
    assert_eq!(s.get("McpServerEnabled").and_then(toml::Value::as_bool), Some(false));
    let c = toml_file(&h.directory.join("mcec.commands"));
    let enabled = |k: &str| c.get(k).and_then(|t| t.get("Enabled")).and_then(toml::Value::as_bool);
    assert_eq!(enabled("click"), Some(true));
    assert_eq!(enabled("screenshot"), Some(false));
    assert_eq!(enabled("launch"), Some(false));
}

#[test]
fn teardown_checks_token_then_lock_then_removes() {
    let env = env();
    let h = provision(request(&env, true, None)).expect("provision");
    let id = h.session_id.as_str();

    let wrong = end_session(&env.root, id, &"0".repeat(64)).expect_err("wrong token");
    assert_eq!(wrong.to_tool_error().code, ErrorCode::SessionTokenInvalid);
    assert!(h.directory.join("mcec.settings").exists(), "wrong token must leave the dir intact");

    let child = hold_lock_in_child(&h.directory);
    let running = end_session(&env.root, id, &h.token).expect_err("running");
    assert!(matches!(running, TeardownError::Running(_)));
    assert_eq!(running.to_tool_error().code, ErrorCode::SessionRunning);
    assert!(h.directory.exists());
    kill_child(child);
    assert!(!is_locked(&h.directory), "kill -9 released the lock");

    let done = end_session(&env.root, id, &h.token).expect("end");
    assert!(done.removed && !done.already_gone);
    assert_eq!(
        serde_json::to_value(&done).expect("json"),
        serde_json::json!({"sessionId": id, "removed": true})
    );
    assert!(!h.directory.exists());
    let again = end_session(&env.root, id, &h.token).expect("idempotent");
    assert!(again.already_gone);
}

#[test]
fn garbage_config_fails_closed() {
    let env = env();
    let h = provision(request(&env, true, None)).expect("provision");
    std::fs::write(h.directory.join("mcec.settings"), "this is [not toml\n").expect("write");
    let e = end_session(&env.root, h.session_id.as_str(), &h.token).expect_err("refused");
    assert_eq!(e.to_tool_error().code, ErrorCode::SessionTokenInvalid);
    assert!(h.directory.exists());
    std::fs::remove_file(h.directory.join("mcec.settings")).expect("rm");
    let e = end_session(&env.root, h.session_id.as_str(), &h.token).expect_err("refused");
    assert_eq!(e.to_tool_error().code, ErrorCode::SessionTokenInvalid);
    assert!(h.directory.exists());
}

#[test]
fn planted_symlinks_survive_teardown() {
    let env = env();
    let h = provision(request(&env, true, None)).expect("provision");
    let victim_file = env.outside.join("precious.txt");
    std::fs::write(&victim_file, b"keep me").expect("write");
    let victim_dir = env.outside.join("precious-dir");
    std::fs::create_dir(&victim_dir).expect("mkdir");
    std::fs::write(victim_dir.join("inner"), b"keep").expect("write");
    std::os::unix::fs::symlink(&victim_file, h.directory.join("link-to-file")).expect("ln");
    std::os::unix::fs::symlink(&victim_dir, h.directory.join("link-to-dir")).expect("ln");
    std::fs::create_dir(h.directory.join("artifacts")).expect("mkdir");
    std::os::unix::fs::symlink(&env.outside, h.directory.join("artifacts/up")).expect("ln");

    end_session(&env.root, h.session_id.as_str(), &h.token).expect("end");
    assert!(!h.directory.exists());
    assert_eq!(std::fs::read(&victim_file).expect("read"), b"keep me");
    assert_eq!(std::fs::read(victim_dir.join("inner")).expect("read"), b"keep");
}

#[test]
fn bad_ids_and_tokens_are_bad_arguments() {
    let env = env();
    let h = provision(request(&env, false, None)).expect("provision");
    for id in ["..", "../x", "", "ABCDEF012345", "/etc", "0123456789ab/..", "0123456789a"] {
        let e = end_session(&env.root, id, &h.token).expect_err(id);
        assert_eq!(e.to_tool_error().code, ErrorCode::BadArguments, "{id}");
    }
    let e = end_session(&env.root, h.session_id.as_str(), "  ").expect_err("blank");
    assert_eq!(e.to_tool_error().code, ErrorCode::BadArguments);
    assert!(e.to_tool_error().detail.contains("token"));
    assert!(h.directory.exists());
}

#[test]
fn reaper_collects_stale_sessions_but_not_running_ones() {
    let env = env();
    let stale = provision(request(&env, false, None)).expect("provision");
    let running = provision(request(&env, false, None)).expect("provision");
    let fresh = provision(request(&env, false, None)).expect("provision");
    let age = REAP_AGE + Duration::from_secs(3600);
    backdate(&stale.directory, age);
    backdate(&running.directory, age);
    let child = hold_lock_in_child(&running.directory);

    let report = reap(&env.root, REAP_AGE, SystemTime::now());
    assert_eq!(report.removed, vec![stale.session_id]);
    assert_eq!(report.skipped_running, vec![running.session_id]);
    assert!(!stale.directory.exists());
    assert!(running.directory.exists() && fresh.directory.exists());

    // A copy killed with -9 releases its lock and the next pass collects it.
    kill_child(child);
    let report = reap(&env.root, REAP_AGE, SystemTime::now());
    assert_eq!(report.removed, vec![running.session_id]);
    assert!(fresh.directory.exists());

    let listed: Vec<_> = list_sessions(&env.root).into_iter().map(|s| s.id).collect();
    assert_eq!(listed, vec![fresh.session_id]);
}

#[test]
fn provisioning_reaps_first() {
    let env = env();
    let stale = provision(request(&env, false, None)).expect("provision");
    backdate(&stale.directory, REAP_AGE + Duration::from_secs(1));
    let _next = provision(request(&env, false, None)).expect("provision");
    assert!(!stale.directory.exists());
}

#[test]
fn concurrent_provisions_and_teardowns_do_not_collide() {
    let env = Arc::new(env());
    let barrier = Arc::new(Barrier::new(20));
    let handles: Vec<_> = (0..20)
        .map(|i| {
            let env = Arc::clone(&env);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || -> Result<Handoff, String> {
                barrier.wait();
                let h = provision(request(&env, i % 2 == 0, None)).map_err(|e| e.to_string())?;
                let out =
                    end_session(&env.root, h.session_id.as_str(), &h.token).map_err(|e| e.to_string())?;
                if out.already_gone {
                    return Err(format!("{} was already gone", h.session_id));
                }
                Ok(h)
            })
        })
        .collect();
    let mut ids = std::collections::BTreeSet::new();
    for h in handles {
        let handoff = h.join().expect("thread").expect("provision + teardown");
        ids.insert(handoff.session_id);
    }
    assert_eq!(ids.len(), 20);
    assert!(root_entries(&env.root).is_empty(), "{:?}", root_entries(&env.root));
}

#[test]
fn concurrent_deletes_of_one_session_give_one_removal() {
    let env = Arc::new(env());
    for _ in 0..5 {
        let h = Arc::new(provision(request(&env, false, None)).expect("provision"));
        let barrier = Arc::new(Barrier::new(4));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (env, h, barrier) = (Arc::clone(&env), Arc::clone(&h), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    end_session(&env.root, h.session_id.as_str(), &h.token)
                })
            })
            .collect();
        let results: Vec<_> =
            threads.into_iter().map(|t| t.join().expect("thread").expect("no error")).collect();
        assert_eq!(results.iter().filter(|r| !r.already_gone).count(), 1, "{results:?}");
        assert!(!h.directory.exists());
    }
}

#[test]
fn sessions_root_that_is_a_file_is_a_clear_error() {
    let env = env();
    std::fs::create_dir_all(env.root.parent().expect("parent")).expect("mkdir");
    std::fs::write(&env.root, b"not a dir").expect("write");
    let e = provision(request(&env, true, None)).expect_err("refused");
    assert_eq!(e.to_tool_error().code, ErrorCode::ProvisioningFailed);
    assert!(e.to_string().contains("not a directory"), "{e}");
    assert_eq!(std::fs::read(&env.root).expect("untouched"), b"not a dir");
}

#[test]
fn failed_provision_leaves_nothing_behind() {
    let env = env();
    let mut req = request(&env, true, None);
    req.source_exe = env.outside.join("missing-mcec");
    let e = provision(req).expect_err("fails");
    assert!(matches!(e, ProvisionError::Failed(_)));
    assert!(e.to_string().contains("missing-mcec"), "{e}");
    assert!(root_entries(&env.root).is_empty(), "{:?}", root_entries(&env.root));

    let mut req = request(&env, true, None);
    req.source_exe = env.outside.clone();
    assert!(provision(req).is_err(), "a directory is not an executable");
    assert!(root_entries(&env.root).is_empty(), "{:?}", root_entries(&env.root));
}

#[test]
fn oversized_command_list_is_refused_before_touching_disk() {
    let env = env();
    let many: Vec<&str> = std::iter::repeat_n("click", 10_000).collect();
    let e = provision(request(&env, true, Some(many))).expect_err("refused");
    assert_eq!(e.to_tool_error().code, ErrorCode::BadArguments);
    assert!(!env.root.exists());
}

#[test]
fn sessions_root_that_cannot_be_created_is_a_clear_error() {
    // /proc refuses new directories even for root, so this runs the same everywhere.
    let env = env();
    let mut req = request(&env, true, None);
    req.sessions_root = PathBuf::from("/proc/self/mcec-test/sessions");
    let e = provision(req).expect_err("refused");
    assert_eq!(e.to_tool_error().code, ErrorCode::ProvisioningFailed);
    assert!(e.to_string().contains("cannot create the sessions root"), "{e}");
}

/// The commands file a session gets is one the copy itself accepts, and enabling
/// `send_command` enables its raw command kinds too (otherwise every line would be refused).
#[test]
fn provisioned_commands_parse_and_enable_send_command_kinds() {
    let env = env();
    let mut req = request(&env, false, None);
    req.all_tool_names = mcec_rules::catalog::TOOLS.iter().map(|t| t.name.to_string()).collect();
    let h = provision(req).expect("provision");
    let text = std::fs::read_to_string(h.directory.join("mcec.commands")).expect("read");
    let parsed = mcec_rules::settings::parse_commands(&text, "mcec.commands").expect("the copy accepts it");
    let commands = parsed.value;
    assert!(commands.is_enabled("send_command"));
    for kind in ["chars", "key", "mouse", "pause"] {
        assert!(commands.is_enabled(&format!("send_command.{kind}")), "{kind}");
    }
    assert!(!commands.is_enabled("launch"));
}

#[test]
fn own_display_is_recorded_and_counted_against_the_limit() {
    use mcec_rules::own_display::OwnDisplaySize;
    let env = env();
    let own = |max| ProvisionRequest {
        own_display: Some(OwnDisplaySize { width: 1024, height: 768 }),
        own_display_sessions_max: max,
        ..request(&env, false, None)
    };
    let first = provision(own(2)).expect("first own-display session");
    let settings = toml_file(&first.directory.join("mcec.settings"));
    assert_eq!(settings.get("OwnDisplay").and_then(|v| v.as_str()), Some("1024x768"));
    let shown = serde_json::to_value(&first).expect("json");
    assert_eq!(shown["desktop"], serde_json::json!({"own": true, "width": 1024, "height": 768}));
    // A session on the operator's display neither records one nor counts.
    let shared = provision(request(&env, false, None)).expect("shared session");
    assert!(!toml_file(&shared.directory.join("mcec.settings")).contains_key("OwnDisplay"));
    assert!(serde_json::to_value(&shared).expect("json").get("desktop").is_none());
    provision(own(2)).expect("second own-display session");
    let refused = provision(own(2)).expect_err("a third passes the limit of 2");
    let e = refused.to_tool_error();
    assert_eq!(e.code, ErrorCode::Unavailable);
    assert!(e.detail.contains("OwnDisplaySessionsMax is 2"), "{}", e.detail);
    let listed = list_sessions(&env.root);
    assert_eq!(listed.len(), 3, "the refusal left nothing behind");
    let sizes: Vec<_> = listed.iter().filter_map(|s| s.own_display.as_deref()).collect();
    assert_eq!(sizes, ["1024x768", "1024x768"], "the listing says which sessions have their own display");
    end_session(&env.root, first.session_id.as_str(), &first.token).expect("end one");
    provision(own(2)).expect("room again once one ended");
}
