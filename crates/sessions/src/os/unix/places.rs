//! Where things are on Unix: the executable's name, the XDG base directories, the prefixes
//! that mark an installed copy, and the home directory as the user database (`getpwuid_r`)
//! has it, never `$HOME`.

use std::ffi::{CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::paths::{PathsError, XdgDirs, home_dir};

/// The executable's name inside a session directory.
pub const EXE_NAME: &str = "mcec";

/// Absolute prefixes that always mark an installed copy.
pub const SYSTEM_PREFIXES: &[&str] = &["/usr", "/opt", "/snap", "/nix/store"];

/// Prefixes relative to the home directory that mark an installed copy.
pub const HOME_PREFIXES: &[&str] = &[".local/bin", ".cargo/bin"];

/// Nothing beyond the fixed prefixes on Unix.
pub fn system_install_dirs() -> Vec<PathBuf> {
    Vec::new()
}

/// The XDG base directories from the process environment.
pub fn xdg_dirs() -> Result<XdgDirs, PathsError> {
    let home = home_dir().ok_or(PathsError::NoHome)?;
    Ok(XdgDirs::from_vars(&home, std::env::var_os("XDG_CONFIG_HOME"), std::env::var_os("XDG_STATE_HOME")))
}

/// The home directory of the real user id, or why it cannot be known.
pub fn home_from_user_database() -> Result<PathBuf, String> {
    let mut buf = vec![0u8; 4096];
    loop {
        match lookup(&mut buf) {
            Err(libc::ERANGE) if buf.len() < (1 << 20) => buf.resize(buf.len() * 2, 0),
            Err(0) => return Err("the user database has no entry for this user id".into()),
            Err(code) => {
                return Err(format!("getpwuid_r failed: {}", std::io::Error::from_raw_os_error(code)));
            }
            Ok(home) if home.is_absolute() => return Ok(home),
            Ok(home) => return Err(format!("the user database names a relative home {}", home.display())),
        }
    }
}

/// One `getpwuid_r` call; `Err(0)` means "no entry", other errors are errno values.
#[allow(unsafe_code, reason = "getpwuid_r is the user database's C API")]
fn lookup(buf: &mut [u8]) -> Result<PathBuf, i32> {
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    // SAFETY: `passwd` is plain old data; an all-zero value is valid and is overwritten below.
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call, `buf.len()` is the buffer's true length,
    // and the strings it fills in point into `buf`, which outlives their use below.
    let rc = unsafe { libc::getpwuid_r(uid, &mut entry, buf.as_mut_ptr().cast(), buf.len(), &mut found) };
    if rc != 0 {
        return Err(rc);
    }
    if found.is_null() || entry.pw_dir.is_null() {
        return Err(0);
    }
    // SAFETY: getpwuid_r succeeded, so `pw_dir` is a NUL-terminated string inside `buf`.
    let dir = unsafe { CStr::from_ptr(entry.pw_dir) };
    Ok(PathBuf::from(OsStr::from_bytes(dir.to_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_home_comes_from_the_user_database_not_the_environment() {
        let home = home_from_user_database().expect("this user has a passwd entry");
        assert!(home.is_absolute());
        let passwd = std::fs::read_to_string("/etc/passwd").expect("/etc/passwd");
        // The same uid's line in /etc/passwd names the same home.
        let uid =
            std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m)).expect("uid");
        let line =
            passwd.lines().find(|l| l.split(':').nth(2) == Some(&uid.to_string())).expect("passwd line");
        assert_eq!(line.split(':').nth(5).map(PathBuf::from), Some(home));
    }
}
