//! Ending the own display's process group: the server, its bus, its window manager and every
//! program started there, and what a killed server leaves in `/tmp`; and, for a copy killed
//! before it could end them, the parent-death signal of the three it starts itself.

use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};

/// How often the end looks whether the server has gone.
const POLL: Duration = Duration::from_millis(20);

/// `command`'s process gets SIGTERM when the thread that starts it (the copy's main thread,
/// which lives as long as the copy) ends, however it ends: a copy killed with SIGKILL leaves
/// no X server, bus or window manager behind (the programs there lose their display).
#[allow(unsafe_code, reason = "pre_exec runs one prctl in the child, between fork and exec")]
pub fn end_with_parent(command: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec and only calls
    // prctl(PR_SET_PDEATHSIG), which is async-signal-safe, allocates nothing and touches no
    // state shared with the parent.
    unsafe {
        command.pre_exec(|| {
            rustix::process::set_parent_process_death_signal(Some(Signal::TERM)).map_err(std::io::Error::from)
        });
    }
}

/// SIGTERM to the group `group`, a wait of at most `patience` for `server` (its leader) to
/// exit, then SIGKILL to whatever is left of the group; every child of ours is reaped.
pub fn end(group: u32, server: &mut Child, helpers: &mut [Child], patience: Duration) {
    let Some(pid) = i32::try_from(group).ok().and_then(Pid::from_raw) else { return };
    signal(pid, Signal::TERM);
    let deadline = Instant::now() + patience;
    while matches!(server.try_wait(), Ok(None)) && Instant::now() < deadline {
        std::thread::sleep(POLL);
    }
    if matches!(server.try_wait(), Ok(None)) {
        tracing::warn!("the own display's server did not end on SIGTERM within {patience:?}; killing it");
    }
    signal(pid, Signal::KILL);
    let _ = server.kill();
    let _ = server.wait();
    for helper in helpers {
        let _ = helper.kill();
        let _ = helper.wait();
    }
}

fn signal(group: Pid, sig: Signal) {
    match kill_process_group(group, sig) {
        Ok(()) | Err(rustix::io::Errno::SRCH) => {}
        Err(e) => tracing::warn!("cannot signal the own display's process group {group:?}: {e}"),
    }
}

/// The lock file (in `lock_dir`) and socket (in `socket_dir`) of display `number`, removed
/// when the server `pid` that made them is gone without removing them (killed); someone
/// else's are left alone.
pub fn remove_leftovers(lock_dir: &Path, socket_dir: &Path, number: u32, pid: u32) {
    let lock = lock_dir.join(format!(".X{number}-lock"));
    let Ok(text) = std::fs::read_to_string(&lock) else { return };
    if text.trim().parse::<u32>().ok() != Some(pid) {
        return;
    }
    tracing::warn!("the own display's server left {} behind; removing it and its socket", lock.display());
    let _ = std::fs::remove_file(socket_dir.join(format!("X{number}")));
    let _ = std::fs::remove_file(&lock);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_dead_servers_own_leftovers_are_removed() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let sockets = tmp.path().join(".X11-unix");
        std::fs::create_dir(&sockets).expect("mkdir");
        let plant = |number: u32, pid: u32| {
            std::fs::write(tmp.path().join(format!(".X{number}-lock")), format!("{pid:>10}\n"))
                .expect("lock");
            std::fs::write(sockets.join(format!("X{number}")), b"").expect("socket");
        };
        plant(7, 4242);
        plant(8, 999);
        remove_leftovers(tmp.path(), &sockets, 7, 4242);
        remove_leftovers(tmp.path(), &sockets, 8, 4242);
        assert!(!tmp.path().join(".X7-lock").exists() && !sockets.join("X7").exists(), "ours went");
        assert!(tmp.path().join(".X8-lock").exists() && sockets.join("X8").exists(), "another server's stay");
        remove_leftovers(tmp.path(), &sockets, 9, 4242);
    }
}
