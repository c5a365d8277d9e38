//! Where things live on disk.
//!
//! * Configuration (`mcec.settings`, `mcec.commands`, `mcec.log`): a non-installed copy keeps
//!   them beside its own executable, so a session copy reads its co-located config with
//!   no flags; an installed copy uses `$XDG_CONFIG_HOME/mcec` (default `~/.config/mcec`).
//! * Sessions: `$XDG_STATE_HOME/mcec/sessions/<id>` (default `~/.local/state/mcec/sessions`).
//!   Not `/tmp`, which is often mounted `noexec`.
//! * Artefacts (evidence bundles, recordings): inside the session directory for a provisioned
//!   copy, so teardown collects them; `$XDG_STATE_HOME/mcec/artifacts` for every other copy.
//!
//! Resolution is a pure function of the executable path, the installed-copy verdict and the
//! XDG variables ([`XdgDirs`]), so it is unit-tested without touching the environment.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::id::SessionId;

/// The settings file, beside the executable (or in the config dir of an installed copy).
pub const SETTINGS_FILE: &str = "mcec.settings";
/// The per-command enable table.
pub const COMMANDS_FILE: &str = "mcec.commands";
/// The log file beside the settings file.
pub const LOG_FILE: &str = "mcec.log";
/// The instance lock a running copy holds in its own directory.
pub const LOCK_FILE: &str = ".mcec.lock";
/// The creation stamp of a session copy (unix seconds, decimal).
pub const STAMP_FILE: &str = ".mcec-session";
/// The executable's name inside a session directory (`mcec`, `mcec.exe`).
pub use crate::os::EXE_NAME;
/// The artefacts folder inside a session directory.
pub const SESSION_ARTIFACTS_DIR: &str = "artifacts";

/// The base directories of the XDG spec that mcec uses. On Windows the same three roles are
/// played by the profile folder, `%APPDATA%` (config) and `%LOCALAPPDATA%` (state: sessions,
/// artefacts), as the shell's known-folder API names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XdgDirs {
    pub home: PathBuf,
    pub config_home: PathBuf,
    pub state_home: PathBuf,
}

/// Why the base directories could not be found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathsError {
    /// Neither `$HOME` nor the password database gives an absolute home directory.
    NoHome,
    /// The running executable's path is unavailable.
    NoExe(String),
}

impl fmt::Display for PathsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathsError::NoHome => f.write_str("cannot find the home directory (set $HOME)"),
            PathsError::NoExe(e) => write!(f, "cannot find the running executable: {e}"),
        }
    }
}

impl std::error::Error for PathsError {}

/// The current user's home directory, if one is known and absolute.
pub fn home_dir() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf()).filter(|h| h.is_absolute())
}

impl XdgDirs {
    /// Pure resolution from the variable values. Per the XDG spec a relative or empty
    /// `XDG_*_HOME` is ignored in favour of the default.
    pub fn from_vars(
        home: &Path,
        xdg_config_home: Option<OsString>,
        xdg_state_home: Option<OsString>,
    ) -> XdgDirs {
        let pick = |var: Option<OsString>, default: &str| {
            var.map(PathBuf::from).filter(|p| p.is_absolute()).unwrap_or_else(|| home.join(default))
        };
        XdgDirs {
            home: home.to_path_buf(),
            config_home: pick(xdg_config_home, ".config"),
            state_home: pick(xdg_state_home, ".local/state"),
        }
    }

    /// From the process environment on Unix; from the known folders on Windows
    /// (`%APPDATA%` for config, `%LOCALAPPDATA%` for state).
    pub fn from_env() -> Result<XdgDirs, PathsError> {
        crate::os::xdg_dirs()
    }

    /// `$XDG_STATE_HOME/mcec/sessions`.
    pub fn sessions_root(&self) -> PathBuf {
        self.state_home.join("mcec").join("sessions")
    }
}

/// Every path a running copy needs, resolved once at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McecPaths {
    /// The executable this copy runs from.
    pub exe: PathBuf,
    /// The executable's directory (where a running non-installed copy holds its lock).
    pub exe_dir: PathBuf,
    /// Whether this is an installed copy (see [`crate::install`]).
    pub installed: bool,
    /// Where `mcec.settings`, `mcec.commands` and `mcec.log` live.
    pub config_dir: PathBuf,
    /// The root under which sessions are provisioned.
    pub sessions_root: PathBuf,
    /// Where this copy writes artefacts.
    pub artifacts_dir: PathBuf,
    /// `Some` when this copy runs from a session directory. Deliberately loose
    /// (name and stamp only, wherever the directory sits): it is used to force
    /// `AllowSessionProvisioning` off, and erring towards "provisioned" is the safe side.
    pub session: Option<SessionId>,
}

impl McecPaths {
    /// Pure resolution.
    pub fn resolve(exe: &Path, installed: bool, xdg: &XdgDirs) -> McecPaths {
        let exe_dir = exe.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("/"));
        let config_dir = if installed { xdg.config_home.join("mcec") } else { exe_dir.clone() };
        let session = if installed { None } else { session_id_of_dir(&exe_dir) };
        let artifacts_dir = match session {
            Some(_) => exe_dir.join(SESSION_ARTIFACTS_DIR),
            None => xdg.state_home.join("mcec").join("artifacts"),
        };
        McecPaths {
            exe: exe.to_path_buf(),
            exe_dir,
            installed,
            config_dir,
            sessions_root: xdg.sessions_root(),
            artifacts_dir,
            session,
        }
    }

    /// For the running process: its executable, the installed-copy verdict and the environment.
    pub fn for_current_process() -> Result<McecPaths, PathsError> {
        let exe = std::env::current_exe().map_err(|e| PathsError::NoExe(e.to_string()))?;
        let xdg = XdgDirs::from_env()?;
        let installed = crate::install::is_installed_copy(&exe);
        Ok(McecPaths::resolve(&exe, installed, &xdg))
    }

    pub fn settings_file(&self) -> PathBuf {
        self.config_dir.join(SETTINGS_FILE)
    }

    pub fn commands_file(&self) -> PathBuf {
        self.config_dir.join(COMMANDS_FILE)
    }

    pub fn log_file(&self) -> PathBuf {
        self.config_dir.join(LOG_FILE)
    }
}

/// The session id of `dir` when it looks like a session directory: a real
/// directory (not a symlink) whose name is a session id and which holds a regular stamp file.
/// Says nothing about where `dir` sits; see [`is_session_dir`] for that.
pub fn session_id_of_dir(dir: &Path) -> Option<SessionId> {
    let id = SessionId::parse(dir.file_name()?.to_str()?).ok()?;
    let meta = std::fs::symlink_metadata(dir).ok()?;
    if !meta.file_type().is_dir() {
        return None;
    }
    let stamp = std::fs::symlink_metadata(dir.join(STAMP_FILE)).ok()?;
    stamp.file_type().is_file().then_some(id)
}

/// Whether `dir` is a session directory directly inside `sessions_root`: it passes
/// [`session_id_of_dir`] and its parent is the sessions root (compared by real path).
pub fn is_session_dir(sessions_root: &Path, dir: &Path) -> bool {
    if session_id_of_dir(dir).is_none() {
        return false;
    }
    let (Some(parent), Ok(root)) = (dir.parent(), sessions_root.canonicalize()) else {
        return false;
    };
    parent.canonicalize().is_ok_and(|p| p == root)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn xdg() -> XdgDirs {
        XdgDirs::from_vars(Path::new("/home/op"), None, None)
    }

    #[test]
    fn xdg_defaults_and_overrides() {
        let d = xdg();
        assert_eq!(d.config_home, PathBuf::from("/home/op/.config"));
        assert_eq!(d.state_home, PathBuf::from("/home/op/.local/state"));
        assert_eq!(d.sessions_root(), PathBuf::from("/home/op/.local/state/mcec/sessions"));
        let o = XdgDirs::from_vars(Path::new("/home/op"), Some("/cfg".into()), Some("relative/state".into()));
        assert_eq!(o.config_home, PathBuf::from("/cfg"));
        assert_eq!(o.state_home, PathBuf::from("/home/op/.local/state"));
        let e = XdgDirs::from_vars(Path::new("/h"), Some("".into()), Some("/st".into()));
        assert_eq!(e.config_home, PathBuf::from("/h/.config"));
        assert_eq!(e.sessions_root(), PathBuf::from("/st/mcec/sessions"));
    }

    #[test]
    fn non_installed_copy_reads_beside_its_exe() {
        let p = McecPaths::resolve(Path::new("/home/op/build/mcec"), false, &xdg());
        assert_eq!(p.config_dir, PathBuf::from("/home/op/build"));
        assert_eq!(p.settings_file(), PathBuf::from("/home/op/build/mcec.settings"));
        assert_eq!(p.commands_file(), PathBuf::from("/home/op/build/mcec.commands"));
        assert_eq!(p.artifacts_dir, PathBuf::from("/home/op/.local/state/mcec/artifacts"));
        assert_eq!(p.session, None);
    }

    #[test]
    fn installed_copy_reads_xdg_config() {
        let p = McecPaths::resolve(Path::new("/usr/bin/mcec"), true, &xdg());
        assert_eq!(p.config_dir, PathBuf::from("/home/op/.config/mcec"));
        assert_eq!(p.log_file(), PathBuf::from("/home/op/.config/mcec/mcec.log"));
    }

    #[test]
    fn session_dir_detection() {
        let root_tmp = tempfile::tempdir().expect("tempdir");
        let root = root_tmp.path();
        let dir = root.join("0123456789ab");
        std::fs::create_dir(&dir).expect("mkdir");
        assert!(!is_session_dir(root, &dir), "no stamp yet");
        std::fs::write(dir.join(STAMP_FILE), b"1").expect("stamp");
        assert!(is_session_dir(root, &dir));
        assert_eq!(session_id_of_dir(&dir).map(|i| i.to_string()), Some("0123456789ab".into()));

        let p = McecPaths::resolve(&dir.join(EXE_NAME), false, &xdg());
        assert_eq!(p.session.map(|i| i.to_string()), Some("0123456789ab".into()));
        assert_eq!(p.artifacts_dir, dir.join(SESSION_ARTIFACTS_DIR));
        assert_eq!(p.config_dir, dir);

        let other = tempfile::tempdir().expect("tempdir");
        assert!(!is_session_dir(other.path(), &dir), "wrong root");

        let bad_name = root.join("not-an-id");
        std::fs::create_dir(&bad_name).expect("mkdir");
        std::fs::write(bad_name.join(STAMP_FILE), b"1").expect("stamp");
        assert!(!is_session_dir(root, &bad_name));

        let link = root.join("00000000beef");
        std::os::unix::fs::symlink(&dir, &link).expect("symlink");
        assert!(!is_session_dir(root, &link), "a symlink is never a session dir");

        let file = root.join("00000000cafe");
        std::fs::write(&file, b"").expect("file");
        assert!(!is_session_dir(root, &file));
    }
}
