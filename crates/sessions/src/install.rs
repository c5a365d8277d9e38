//! Is this copy of mcec *installed*?
//!
//! An installed copy never serves the agent surface (contract, "Installed copy"), so this check
//! is a safety decision and it fails closed: whenever the answer is uncertain (the executable's
//! real path cannot be resolved, its directory cannot be probed) the copy counts as installed.
//!
//! On Windows the built-in prefixes are `Program Files` (both, as written and as
//! `%ProgramFiles%`, `%ProgramFiles(x86)%`, `%ProgramW6432%` name them: the variables can only
//! add), `%LOCALAPPDATA%\Programs` and `~\.cargo\bin`, and the extra list is `;`-separated.
//!
//! A copy is installed when its executable's real path lies under one of the built-in prefixes
//! (`/usr`, `/opt`, `/snap`, `/nix/store`, `~/.local/bin`, `~/.cargo/bin`, where `~` is both
//! the home directory in the user database and `$HOME`, so changing `$HOME` cannot make an
//! installed copy look like a manual one), under a prefix
//! listed in `MCEC_EXTRA_INSTALL_PREFIXES` (colon-separated; it can only add prefixes), or in a
//! directory the current user cannot write. The writability probe creates and removes a
//! uniquely named empty file, which answers for permissions, ACLs and read-only mounts alike
//! without any `unsafe` call to `access(2)`.

use std::ffi::OsStr;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use crate::os::system_install_dirs;

/// The environment variable that adds install prefixes (for tests and packagers).
pub const EXTRA_PREFIXES_ENV: &str = "MCEC_EXTRA_INSTALL_PREFIXES";

/// The prefixes that always mark an installed copy: absolute ones, and ones relative to the
/// home directory (this platform's, from [`crate::os`]).
pub use crate::os::{HOME_PREFIXES, SYSTEM_PREFIXES};

/// Every install prefix: the built-in ones, those under `home`, and the absolute entries of
/// `extra` (the value of [`EXTRA_PREFIXES_ENV`]). Empty and relative entries of `extra` are
/// ignored; they could never name a place unambiguously.
pub fn install_prefixes(home: Option<&Path>, extra: Option<&OsStr>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = SYSTEM_PREFIXES.iter().map(PathBuf::from).collect();
    if let Some(home) = home.filter(|h| h.is_absolute()) {
        out.extend(HOME_PREFIXES.iter().map(|p| home.join(p)));
    }
    if let Some(extra) = extra {
        out.extend(std::env::split_paths(extra).filter(|p| p.is_absolute()));
    }
    out
}

/// The pure decision: `exe_real` is the canonical path of the executable, `prefixes` the
/// install prefixes, `dir_writable` whether the user can write the executable's directory.
/// Prefixes match whole path components (`/usr` covers `/usr/bin/mcec`, not `/usrx/mcec`).
pub fn is_installed_with(exe_real: &Path, prefixes: &[PathBuf], dir_writable: bool) -> bool {
    !dir_writable || prefixes.iter().any(|p| exe_real.starts_with(p))
}

/// Whether the copy whose executable is `exe` is installed, reading the home directory and
/// [`EXTRA_PREFIXES_ENV`] from the environment. Fails closed (answers `true`) when the real path
/// of `exe` cannot be resolved.
pub fn is_installed_copy(exe: &Path) -> bool {
    let extra = std::env::var_os(EXTRA_PREFIXES_ENV);
    let mut homes = vec![crate::user_home::home_from_user_database().ok()];
    homes.push(crate::paths::home_dir());
    homes.into_iter().flatten().any(|home| is_installed_copy_with(exe, Some(&home), extra.as_deref()))
        || is_installed_copy_with(exe, None, extra.as_deref())
}

/// [`is_installed_copy`] with the home directory and the extra-prefix list given explicitly.
pub fn is_installed_copy_with(exe: &Path, home: Option<&Path>, extra: Option<&OsStr>) -> bool {
    let Ok(real) = exe.canonicalize() else {
        tracing::warn!(exe = %exe.display(), "cannot resolve the executable's real path; treating this copy as installed");
        return true;
    };
    let Some(dir) = real.parent() else {
        return true;
    };
    let mut prefixes = install_prefixes(home, extra);
    prefixes.extend(system_install_dirs());
    // A prefix that is itself behind a symlink (say ~/.local/bin -> /data/bin) must still
    // match the executable's real path, so add the canonical form of every prefix too.
    let resolved: Vec<PathBuf> = prefixes.iter().filter_map(|p| p.canonicalize().ok()).collect();
    prefixes.extend(resolved);
    is_installed_with(&real, &prefixes, dir_is_writable(dir))
}

/// Whether the current user can create files in `dir`, found by creating and removing a
/// uniquely named empty file. Any failure (permission, read-only mount, full disk) is `false`.
pub fn dir_is_writable(dir: &Path) -> bool {
    let mut suffix = [0u8; 8];
    if getrandom::fill(&mut suffix).is_err() {
        return false;
    }
    let probe = dir.join(format!(".mcec-write-probe-{}-{}", std::process::id(), hex::encode(suffix)));
    match OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(file) => {
            drop(file);
            if let Err(e) = std::fs::remove_file(&probe) {
                tracing::warn!(probe = %probe.display(), error = %e, "could not remove the write probe");
            }
            true
        }
        Err(_) => false,
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn prefixes() -> Vec<PathBuf> {
        install_prefixes(Some(Path::new("/home/op")), Some(OsStr::new("/srv/tools::rel/dir")))
    }

    #[test]
    fn builtin_and_home_prefixes_mark_installed() {
        let p = prefixes();
        for exe in [
            "/usr/bin/mcec",
            "/usr/local/bin/mcec",
            "/opt/mcec/mcec",
            "/snap/mcec/1/bin/mcec",
            "/nix/store/abc-mcec/bin/mcec",
            "/home/op/.local/bin/mcec",
            "/home/op/.cargo/bin/mcec",
            "/srv/tools/mcec",
        ] {
            assert!(is_installed_with(Path::new(exe), &p, true), "{exe}");
        }
    }

    #[test]
    fn other_places_are_not_installed_when_writable() {
        let p = prefixes();
        for exe in [
            "/home/op/build/mcec",
            "/usrx/mcec",
            "/home/op/.local/state/mcec/sessions/0123456789ab/mcec",
            "/tmp/mcec",
            "/srv/toolsx/mcec",
        ] {
            assert!(!is_installed_with(Path::new(exe), &p, true), "{exe}");
        }
    }

    #[test]
    fn unwritable_directory_marks_installed() {
        assert!(is_installed_with(Path::new("/home/op/build/mcec"), &prefixes(), false));
    }

    #[test]
    fn empty_and_relative_extra_entries_are_ignored() {
        let p = prefixes();
        assert!(p.contains(&PathBuf::from("/srv/tools")));
        assert!(!p.iter().any(|x| x.as_os_str().is_empty() || x.is_relative()));
        let no_extra = install_prefixes(None, None);
        assert_eq!(no_extra.len(), SYSTEM_PREFIXES.len());
    }

    #[test]
    fn real_copy_in_writable_dir_is_not_installed_and_extra_prefix_adds() {
        let dir = tempfile::tempdir().expect("tempdir");
        let exe = dir.path().join("mcec");
        std::fs::write(&exe, b"x").expect("write");
        let home = Path::new("/nonexistent-home");
        assert!(!is_installed_copy_with(&exe, Some(home), None));
        let extra = dir.path().as_os_str().to_owned();
        assert!(is_installed_copy_with(&exe, Some(home), Some(&extra)));
        // No probe file is left behind.
        let left: Vec<_> = std::fs::read_dir(dir.path()).expect("read").collect();
        assert_eq!(left.len(), 1);
    }

    #[test]
    fn symlinked_exe_is_judged_by_its_real_path() {
        let real_dir = tempfile::tempdir().expect("tempdir");
        let link_dir = tempfile::tempdir().expect("tempdir");
        let exe = real_dir.path().join("mcec");
        std::fs::write(&exe, b"x").expect("write");
        let link = link_dir.path().join("mcec");
        std::os::unix::fs::symlink(&exe, &link).expect("symlink");
        let extra = real_dir.path().as_os_str().to_owned();
        assert!(is_installed_copy_with(&link, None, Some(&extra)));
        let extra_link = link_dir.path().as_os_str().to_owned();
        assert!(!is_installed_copy_with(&link, None, Some(&extra_link)));
    }

    #[test]
    fn missing_exe_fails_closed() {
        assert!(is_installed_copy_with(Path::new("/nonexistent/dir/mcec"), None, None));
    }

    #[test]
    fn read_only_directory_is_installed_unless_root() {
        let dir = tempfile::tempdir().expect("tempdir");
        let exe = dir.path().join("mcec");
        std::fs::write(&exe, b"x").expect("write");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o500)).expect("chmod");
        let writable = dir_is_writable(dir.path());
        // Root ignores directory permissions; the probe must then report the truth.
        let can_write_anyway = std::fs::write(dir.path().join("root-check"), b"").is_ok();
        assert_eq!(writable, can_write_anyway);
        assert_eq!(is_installed_copy_with(&exe, None, None), !can_write_anyway);
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    }

    #[test]
    fn the_user_database_home_is_found_without_home() {
        let home =
            crate::user_home::home_from_user_database().expect("this user has a home in the user database");
        assert!(home.is_absolute());
        // The copy's own check covers that home whatever $HOME says: a copy under its
        // `.local/bin` is installed (checked through the pure decision, as the real home may
        // not be writable here).
        let prefixes = install_prefixes(Some(&home), None);
        assert!(is_installed_with(&home.join(".local/bin/mcec"), &prefixes, true));
    }
}
