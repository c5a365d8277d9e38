//! Where things are on Windows: the executable's name, the known folders that play the XDG
//! base directories' roles, the prefixes that mark an installed copy, and the profile folder
//! the shell's known-folder API names, never `%USERPROFILE%`.

use std::path::PathBuf;

use crate::paths::{PathsError, XdgDirs};

/// The executable's name inside a session directory.
pub const EXE_NAME: &str = "mcec.exe";

/// Absolute prefixes that always mark an installed copy.
pub const SYSTEM_PREFIXES: &[&str] = &[r"C:\Program Files", r"C:\Program Files (x86)"];

/// Prefixes relative to the home directory that mark an installed copy.
pub const HOME_PREFIXES: &[&str] = &[r"AppData\Local\Programs", r".cargo\bin"];

/// Where the system says programs are installed, beyond the fixed prefixes: the
/// `Program Files` variables and the known `%LOCALAPPDATA%\Programs`. They can only add.
pub fn system_install_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = ["ProgramFiles", "ProgramFiles(x86)", "ProgramW6432"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .collect();
    if let Some(base) = directories::BaseDirs::new() {
        dirs.push(base.data_local_dir().join("Programs"));
    }
    dirs.into_iter().filter(|p| p.is_absolute()).collect()
}

/// From the known folders: `%APPDATA%` for config, `%LOCALAPPDATA%` for state.
pub fn xdg_dirs() -> Result<XdgDirs, PathsError> {
    let dirs = directories::BaseDirs::new().ok_or(PathsError::NoHome)?;
    Ok(XdgDirs {
        home: dirs.home_dir().to_path_buf(),
        config_home: dirs.config_dir().to_path_buf(),
        state_home: dirs.data_local_dir().to_path_buf(),
    })
}

/// The current user's profile folder (`SHGetKnownFolderPath(FOLDERID_Profile)`), or why it
/// cannot be known.
pub fn home_from_user_database() -> Result<PathBuf, String> {
    directories::BaseDirs::new()
        .map(|b| b.home_dir().to_path_buf())
        .filter(|h| h.is_absolute())
        .ok_or_else(|| "the shell names no profile folder for this user".into())
}
