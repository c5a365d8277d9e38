//! Timing of the on-disk session operations, printed as plain numbers (never asserted).
//!
//! `cargo bench -p mcec-sessions` prints: provision p50/p90 with and without the MCP server
//! (copying this bench's own executable as the "running mcec"), end-session p50/p90, and one
//! reaper pass over 1,000 stale sessions (plus one over 1,000 fresh ones, which removes nothing).

// The bench deletes its own scratch trees directly, outside any sessions root.
#![allow(clippy::disallowed_methods, reason = "scratch clean-up and the bare-deletion baseline")]

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use mcec_sessions::{ProvisionRequest, REAP_AGE, end_session, provision, reap};

const ROUNDS: usize = 100;
const STALE: usize = 1_000;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

fn report(label: &str, mut samples: Vec<Duration>) {
    samples.sort();
    println!(
        "{label:<34} n={:<5} p50={:>9.3} ms  p90={:>9.3} ms  max={:>9.3} ms",
        samples.len(),
        percentile(&samples, 0.5).as_secs_f64() * 1e3,
        percentile(&samples, 0.9).as_secs_f64() * 1e3,
        samples.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
    );
}

fn request(root: &Path, exe: &Path, mcp_server: bool) -> ProvisionRequest {
    ProvisionRequest {
        sessions_root: root.to_path_buf(),
        source_exe: exe.to_path_buf(),
        mcp_server,
        commands: None,
        all_tool_names: ["click", "type", "screenshot", "launch", "windows", "key"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        operator_hotkey: "Ctrl+Alt+Shift+S".into(),
        requested_by: "bench",
        own_display: None,
        own_display_sessions_max: mcec_rules::own_display::DEFAULT_SESSIONS_MAX,
    }
}

fn bench_provision(root: &Path, exe: &Path) {
    for mcp_server in [true, false] {
        let mut prov = Vec::with_capacity(ROUNDS);
        let mut end = Vec::with_capacity(ROUNDS);
        for _ in 0..ROUNDS {
            let t = Instant::now();
            let Ok(h) = provision(request(root, exe, mcp_server)) else {
                eprintln!("provision failed");
                return;
            };
            prov.push(t.elapsed());
            let t = Instant::now();
            if let Err(e) = end_session(root, h.session_id.as_str(), &h.token) {
                eprintln!("end-session failed: {e}");
                return;
            }
            end.push(t.elapsed());
        }
        let label = if mcp_server { "with MCP server" } else { "without MCP server" };
        report(&format!("provision ({label})"), prov);
        report(&format!("end-session ({label})"), end);
    }
}

fn make_sessions(root: &Path, created: SystemTime) -> std::io::Result<()> {
    std::fs::create_dir_all(root)?;
    let secs = created.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    for i in 0..STALE {
        let dir = root.join(format!("{i:012x}"));
        std::fs::create_dir(&dir)?;
        std::fs::write(dir.join(".mcec-session"), format!("{secs}\n"))?;
        std::fs::write(dir.join("mcec"), vec![0u8; 4096])?;
        std::fs::write(dir.join("mcec.settings"), "McpAuthToken = \"00\"\n")?;
        std::fs::write(dir.join("mcec.commands"), "[click]\nEnabled = true\n")?;
    }
    Ok(())
}

fn bench_reaper(root: &Path) -> std::io::Result<()> {
    let now = SystemTime::now();
    make_sessions(root, now)?;
    let t = Instant::now();
    let fresh = reap(root, REAP_AGE, now);
    let scan = t.elapsed();
    std::fs::remove_dir_all(root)?;

    make_sessions(root, now - REAP_AGE - Duration::from_secs(60))?;
    let t = Instant::now();
    let stale = reap(root, REAP_AGE, now);
    let reaped = t.elapsed();
    // Baseline: the bare deletion of the same trees, with none of the reaper's guards.
    std::fs::remove_dir_all(root)?;
    make_sessions(root, now)?;
    let t = Instant::now();
    for i in 0..STALE {
        std::fs::remove_dir_all(root.join(format!("{i:012x}")))?;
    }
    let bare = t.elapsed();
    println!("baseline: bare remove_dir_all x{STALE}        {:>9.3} ms", bare.as_secs_f64() * 1e3);
    println!(
        "reaper, {STALE} fresh sessions (removes {:>4})  {:>9.3} ms",
        fresh.removed.len(),
        scan.as_secs_f64() * 1e3
    );
    println!(
        "reaper, {STALE} stale sessions (removes {:>4})  {:>9.3} ms  ({:.3} ms/session)",
        stale.removed.len(),
        reaped.as_secs_f64() * 1e3,
        reaped.as_secs_f64() * 1e3 / STALE as f64
    );
    Ok(())
}

fn main() {
    let Ok(exe) = std::env::current_exe() else {
        eprintln!("no current exe");
        return;
    };
    let size = std::fs::metadata(&exe).map_or(0, |m| m.len());
    let Ok(tmp) = tempfile::tempdir() else {
        eprintln!("no tempdir");
        return;
    };
    println!("source executable: {} ({:.1} MiB)", exe.display(), size as f64 / 1048576.0);
    bench_provision(&tmp.path().join("sessions"), &exe);
    if let Err(e) = bench_reaper(&tmp.path().join("reap")) {
        eprintln!("reaper bench failed: {e}");
    }
}
