//! The creation stamp: `<session>/.mcec-session`, holding the unix time (decimal seconds) at
//! which the session was provisioned. The reaper ages sessions by it and its presence is what
//! marks a directory as a session at all. Tests backdate a session by rewriting it.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::paths::STAMP_FILE;

/// Creates the stamp (mode 0600; fails if one exists) holding `created`.
pub fn write_stamp(dir: &Path, created: SystemTime) -> std::io::Result<()> {
    let secs = created.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let mut file = crate::os::private_file(OpenOptions::new().write(true).create_new(true))
        .open(dir.join(STAMP_FILE))?;
    writeln!(file, "{secs}")?;
    file.sync_all()
}

/// When the session in `dir` was created: the time in its stamp, or, when the stamp's text
/// does not parse, the stamp file's modification time. `None` when there is no readable stamp.
pub fn read_created(dir: &Path) -> Option<SystemTime> {
    let path = dir.join(STAMP_FILE);
    let mut file = crate::safe_open::open_regular(&path, OpenOptions::new().read(true)).ok()?;
    parse_stamp(&mut file).or_else(|| file.metadata().and_then(|m| m.modified()).ok())
}

fn parse_stamp(file: &mut File) -> Option<SystemTime> {
    let mut text = String::new();
    file.take(64).read_to_string(&mut text).ok()?;
    let secs: u64 = text.trim().parse().ok()?;
    UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_fallback() {
        let dir = tempfile::tempdir().expect("tempdir");
        let when = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        write_stamp(dir.path(), when).expect("stamp");
        assert_eq!(read_created(dir.path()), Some(when));
        assert!(write_stamp(dir.path(), when).is_err(), "never overwrites");

        std::fs::write(dir.path().join(STAMP_FILE), b"garbage").expect("write");
        let fallback = read_created(dir.path()).expect("mtime fallback");
        assert!(fallback > when);

        let empty = tempfile::tempdir().expect("tempdir");
        assert_eq!(read_created(empty.path()), None);
    }

    #[test]
    fn a_special_stamp_reads_as_none_at_once() {
        for kind in crate::safe_open::tests::KINDS {
            let dir = tempfile::tempdir().expect("tempdir");
            crate::safe_open::tests::plant(&dir.path().join(STAMP_FILE), kind);
            assert_eq!(read_created(dir.path()), None, "{kind}");
        }
    }
}
