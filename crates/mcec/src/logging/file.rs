//! `mcec.log`: private (mode 0600, fixed when an older file is wider) and bounded (rotated to
//! `mcec.log.1` when it reaches [`MAX_LOG_BYTES`], the older generation dropped with a line
//! saying so).
//!
//! The file is opened without following a symlink and without blocking, and must be a
//! regular file: a FIFO or a device in its place is refused (stderr still gets every line).
//! Several processes of one copy may share the file; each checks the size of the path before
//! it writes, and a process whose file was rotated by another simply reopens the path.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use mcec_sessions::os::{file_identity, narrow_to_owner, open_no_follow, private_file};

/// Size at which `mcec.log` is rotated (so the log takes at most twice this on disk).
pub const MAX_LOG_BYTES: u64 = 8 * 1024 * 1024;

/// The shared log file. Writes are serialised by a mutex and go out as one `write(2)` each.
pub(super) struct LogFile {
    path: PathBuf,
    cap: u64,
    file: Mutex<File>,
}

impl LogFile {
    pub(super) fn open(path: &Path) -> Result<LogFile, String> {
        Self::with_cap(path, MAX_LOG_BYTES)
    }

    pub(super) fn with_cap(path: &Path, cap: u64) -> Result<LogFile, String> {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let file = open_private(path).map_err(|e| format!("cannot open log file {}: {e}", path.display()))?;
        Ok(LogFile { path: path.to_path_buf(), cap, file: Mutex::new(file) })
    }

    /// Append one event, rotating first when it would take the file past the cap.
    pub(super) fn append(&self, line: &[u8]) -> io::Result<()> {
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        let mine = file.metadata()?;
        match std::fs::symlink_metadata(&self.path) {
            // Another process rotated it: follow it to the new file.
            Ok(now) if file_identity(&now) != file_identity(&mine) => *file = open_private(&self.path)?,
            Err(_) => *file = open_private(&self.path)?,
            Ok(now) if now.len() + line.len() as u64 > self.cap && now.len() > 0 => {
                *file = self.rotate()?;
            }
            Ok(_) => {}
        }
        file.write_all(line)
    }

    fn rotate(&self) -> io::Result<File> {
        let mut older = self.path.clone().into_os_string();
        older.push(".1");
        std::fs::rename(&self.path, &older)?;
        let mut fresh = open_private(&self.path)?;
        let name = self.path.file_name().map_or_else(|| "mcec.log".into(), |n| n.to_string_lossy());
        let note = format!(
            "mcec: {name} reached {} bytes and was rotated; the lines before are in {name}.1, and older lines were dropped\n",
            self.cap
        );
        fresh.write_all(note.as_bytes())?;
        Ok(fresh)
    }
}

/// Open for appending, mode 0600, refusing symlinks and anything but a regular file, and
/// narrowing an existing file's mode to 0600.
fn open_private(path: &Path) -> io::Result<File> {
    let file = open_no_follow(path, private_file(OpenOptions::new().create(true).append(true)))?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    narrow_to_owner(&file)?;
    Ok(file)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::fs::Permissions;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).expect("meta").permissions().mode() & 0o777
    }

    #[test]
    fn a_new_log_is_private_and_a_wide_one_is_narrowed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fresh = dir.path().join("a.log");
        LogFile::open(&fresh).expect("open").append(b"x\n").expect("append");
        assert_eq!(mode(&fresh), 0o600);
        let wide = dir.path().join("b.log");
        std::fs::write(&wide, "old\n").expect("write");
        std::fs::set_permissions(&wide, Permissions::from_mode(0o644)).expect("chmod");
        assert_eq!(mode(&wide), 0o644, "the positive control: it starts wide");
        LogFile::open(&wide).expect("open");
        assert_eq!(mode(&wide), 0o600);
    }

    #[test]
    fn a_fifo_a_symlink_or_a_directory_is_refused_without_hanging() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("fifo.log");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo").success());
        assert!(LogFile::open(&fifo).is_err());
        let link = dir.path().join("link.log");
        std::os::unix::fs::symlink(dir.path().join("target"), &link).expect("symlink");
        assert!(LogFile::open(&link).is_err());
        assert!(!dir.path().join("target").exists(), "nothing was created through the symlink");
        assert!(LogFile::open(dir.path()).is_err());
    }

    #[test]
    fn the_log_rotates_at_its_cap_and_says_lines_were_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("mcec.log");
        let log = LogFile::with_cap(&path, 400).expect("open");
        for n in 0..60 {
            log.append(format!("line {n:02} ..........\n").as_bytes()).expect("append");
        }
        let current = std::fs::read_to_string(&path).expect("read");
        let older = std::fs::read_to_string(dir.path().join("mcec.log.1")).expect("read .1");
        assert!(current.len() <= 400, "{current}");
        assert!(older.len() <= 400, "{older}");
        assert!(current.starts_with("mcec: mcec.log reached 400 bytes and was rotated"), "{current}");
        assert!(current.contains("line 59"), "the newest line is kept: {current}");
        assert!(!current.contains("line 00") && !older.contains("line 00"), "the oldest lines were dropped");
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&dir.path().join("mcec.log.1")), 0o600);
    }

    #[test]
    fn a_second_writer_follows_a_rotation_made_by_the_first() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("mcec.log");
        let first = LogFile::with_cap(&path, 300).expect("open");
        let second = LogFile::with_cap(&path, 300).expect("open");
        for n in 0..30 {
            first.append(format!("first {n} .............\n").as_bytes()).expect("append");
        }
        second.append(b"second after the rotation\n").expect("append");
        assert!(std::fs::read_to_string(&path).expect("read").contains("second after the rotation"));
    }
}
