//! Writing a small config file so a reader sees either the old file or the whole new one.
//!
//! Shared by provisioning (a session's co-located `mcec.settings` and `mcec.commands`) and the
//! operator's Agent tab (which rewrites one line of the operator's own `mcec.settings`): the
//! contents go to a fresh temporary file in the same directory (mode 0600, created exclusively
//! so nothing planted there is reused), are flushed, and the temporary file is renamed over
//! the target. A failure removes the temporary file and leaves the target untouched.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

/// Atomically replace `dir/name` with `contents` (mode 0600).
pub fn write_atomic(dir: &Path, name: &str, contents: &[u8]) -> std::io::Result<()> {
    let mut suffix = [0u8; 6];
    getrandom::fill(&mut suffix).map_err(|e| std::io::Error::other(format!("no OS randomness: {e}")))?;
    let tmp = dir.join(format!(".{name}.tmp-{}", hex::encode(suffix)));
    let result = (|| -> std::io::Result<()> {
        let mut file = crate::os::private_file(OpenOptions::new().write(true).create_new(true)).open(&tmp)?;
        file.write_all(contents)?;
        file.sync_all()?;
        std::fs::rename(&tmp, dir.join(name))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn replaces_the_file_with_mode_0600_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("f"), "old").expect("write");
        write_atomic(dir.path(), "f", b"new").expect("atomic write");
        assert_eq!(std::fs::read_to_string(dir.path().join("f")).expect("read"), "new");
        let mode = std::fs::metadata(dir.path().join("f")).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let names: Vec<_> = std::fs::read_dir(dir.path()).expect("ls").filter_map(Result::ok).collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn a_failure_leaves_the_target_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("d")).expect("mkdir");
        std::fs::write(dir.path().join("d").join("x"), "keep").expect("write");
        // Renaming a file over a non-empty directory fails.
        assert!(write_atomic(dir.path(), "d", b"new").is_err());
        assert_eq!(std::fs::read_to_string(dir.path().join("d").join("x")).expect("read"), "keep");
        assert_eq!(std::fs::read_dir(dir.path()).expect("ls").count(), 1);
    }
}
