//! Opening a file in a session or config directory so that no file type can hang or fool mcec.
//!
//! Anyone who can write in a session directory (the agent can) can put a FIFO, a socket, a
//! device link or a directory where mcec expects `mcec.settings`, the stamp or `.mcec.lock`.
//! A plain `open` of a FIFO blocks until a writer appears, forever if none does. So every such
//! open goes through here: `O_NOFOLLOW` (a symlink is refused, never followed),
//! `O_NONBLOCK` (opening a FIFO returns at once) and then `fstat` on the open descriptor: only
//! a regular file is accepted, and anything else is an error that names what was found. On
//! Windows the open is `FILE_FLAG_OPEN_REPARSE_POINT` (a symlink or junction is opened as
//! itself, then refused by the same check); see [`crate::os`].

use std::fs::{File, OpenOptions};
use std::io::{self, ErrorKind, Read};
use std::path::Path;

/// Opens `path` with `options`, never following a symlink (or junction) and never waiting on
/// a FIFO, and checks that it is a regular file. Anything else is an
/// [`ErrorKind::InvalidInput`] error whose text says what it is.
pub fn open_regular(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    let file =
        crate::os::open_no_follow(path, options).map_err(|e| crate::os::explain_open_error(path, e))?;
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    let what = crate::os::kind_in_words(&kind);
    Err(io::Error::new(ErrorKind::InvalidInput, format!("{} is {what}, not a regular file", path.display())))
}

/// The whole of the regular file at `path`, at most `max_bytes` of it (a longer file is an
/// error). `Ok(None)` when there is no file.
pub fn read_regular(path: &Path, max_bytes: u64) -> io::Result<Option<Vec<u8>>> {
    let file = match open_regular(path, OpenOptions::new().read(true)) {
        Ok(f) => f,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut bytes = Vec::new();
    file.take(max_bytes + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(io::Error::new(
            ErrorKind::InvalidData,
            format!("{} is larger than {max_bytes} bytes", path.display()),
        ));
    }
    Ok(Some(bytes))
}

/// Whether `error` (from [`open_regular`]) says the path holds something other than a regular
/// file: a symlink, a FIFO, a socket, a device or a directory.
pub fn is_not_regular(error: &io::Error) -> bool {
    error.kind() == ErrorKind::InvalidInput
        || error.kind() == ErrorKind::IsADirectory
        || crate::os::open_error_is_not_regular(error)
}

#[cfg(all(test, unix))]
pub(crate) mod tests {
    use super::*;
    use std::process::Command;

    /// Makes each special file type at `path`: FIFO, socket, `/dev/zero` link, directory.
    pub(crate) fn plant(path: &Path, kind: &str) {
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_dir(path);
        match kind {
            "fifo" => {
                let ok = Command::new("mkfifo").arg(path).status().expect("mkfifo");
                assert!(ok.success());
            }
            "socket" => {
                let listener = std::os::unix::net::UnixListener::bind(path).expect("bind socket");
                std::mem::forget(listener);
            }
            "devlink" => std::os::unix::fs::symlink("/dev/zero", path).expect("symlink"),
            "dir" => std::fs::create_dir(path).expect("mkdir"),
            other => panic!("unknown kind {other}"),
        }
    }

    pub(crate) const KINDS: [&str; 4] = ["fifo", "socket", "devlink", "dir"];

    #[test]
    fn every_special_file_is_refused_at_once_with_its_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("mcec.settings");
        for (kind, word) in
            [("fifo", "FIFO"), ("socket", "socket"), ("devlink", "symbolic link"), ("dir", "directory")]
        {
            plant(&path, kind);
            let read = read_regular(&path, 1024).expect_err(kind);
            assert!(is_not_regular(&read), "{kind}: {read}");
            assert!(read.to_string().contains(word), "{kind}: {read}");
            let write = open_regular(&path, OpenOptions::new().read(true).write(true)).expect_err(kind);
            assert!(is_not_regular(&write), "{kind}: {write}");
        }
        // Positive controls: a regular file reads, a missing one is None, a long one is refused.
        let _ = std::fs::remove_dir(&path);
        let _ = std::fs::remove_file(&path);
        assert_eq!(read_regular(&path, 1024).expect("missing"), None);
        std::fs::write(&path, b"abc").expect("write");
        assert_eq!(read_regular(&path, 3).expect("read"), Some(b"abc".to_vec()));
        assert!(read_regular(&path, 2).is_err());
    }
}
