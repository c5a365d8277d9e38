//! Where tool output files go: an explicit absolute path as given, anything else inside the
//! instance's artefact directory (so tearing a session down removes them). Nothing lands in
//! `/tmp` by default. A `file` is opened only as a regular file, without waiting
//! (`mcec_sessions::safe_open`): a FIFO, socket, device, directory or symbolic link there is
//! `bad-arguments` at once, never a call that blocks until someone reads.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use mcec_rules::ToolError;

/// The file a tool writes for `requested` (the `file` field), or a fresh name in
/// `artifact_dir` built from `prefix` and `ext` when nothing was requested.
pub(crate) fn output_path(
    artifact_dir: &Path,
    requested: Option<&str>,
    prefix: &str,
    ext: &str,
) -> Result<PathBuf, ToolError> {
    let Some(req) = requested else {
        return Ok(artifact_dir.join(fresh_name(prefix, ext)));
    };
    if req.trim().is_empty() {
        return Err(ToolError::bad_argument("file", "is empty"));
    }
    let path = Path::new(req);
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    if path.components().any(|c| !matches!(c, Component::Normal(_) | Component::CurDir)) {
        return Err(ToolError::bad_argument(
            "file",
            "a relative path must stay inside the artefact directory (no `..`)",
        ));
    }
    Ok(artifact_dir.join(path))
}

/// Create the file's parent directory when it is (inside) the artefact directory.
pub(crate) fn prepare(artifact_dir: &Path, path: &Path) -> Result<(), ToolError> {
    if let Some(parent) = path.parent()
        && parent.starts_with(artifact_dir)
    {
        std::fs::create_dir_all(parent).map_err(|e| {
            ToolError::bad_argument("file", format!("cannot create {}: {e}", parent.display()))
        })?;
    }
    Ok(())
}

/// Create (or truncate) the regular file at `path`, creating the artefact directory as
/// needed. Anything but a regular file is refused without waiting on it.
pub(crate) fn create(artifact_dir: &Path, path: &Path) -> Result<File, ToolError> {
    prepare(artifact_dir, path)?;
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    mcec_sessions::safe_open::open_regular(path, &mut options).map_err(|e| {
        if mcec_sessions::safe_open::is_not_regular(&e) {
            ToolError::bad_argument("file", format!("must name a regular file: {e}"))
        } else {
            ToolError::bad_argument("file", format!("cannot write {}: {e}", path.display()))
        }
    })
}

/// Write `bytes` to the regular file at `path` (see [`create`]).
pub(crate) fn write(artifact_dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), ToolError> {
    create(artifact_dir, path)?
        .write_all(bytes)
        .map_err(|e| ToolError::bad_argument("file", format!("cannot write {}: {e}", path.display())))
}

fn fresh_name(prefix: &str, ext: &str) -> String {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}-{ms}-{n}.{ext}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_in_the_artefact_dir() {
        let dir = Path::new("/state/mcec/artifacts");
        let auto = output_path(dir, None, "capture", "png").unwrap();
        assert!(auto.starts_with(dir) && auto.extension().is_some_and(|e| e == "png"));
        assert_eq!(output_path(dir, Some("a/b.png"), "c", "png").unwrap(), dir.join("a/b.png"));
        assert_eq!(output_path(dir, Some("/x/y.png"), "c", "png").unwrap(), PathBuf::from("/x/y.png"));
        assert!(output_path(dir, Some("../escape.png"), "c", "png").is_err());
        assert!(output_path(dir, Some(" "), "c", "png").is_err());
        assert_ne!(fresh_name("r", "gif"), fresh_name("r", "gif"));
    }

    #[cfg(all(test, unix))]
    #[test]
    fn only_a_regular_file_is_written_and_nothing_waits() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("out.png");
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo").success());
        let socket = dir.path().join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).expect("socket");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        for path in [fifo.as_path(), socket.as_path(), Path::new("/dev/null"), dir.path(), link.as_path()] {
            let e = write(dir.path(), path, b"x").expect_err("refused");
            assert_eq!(e.code, mcec_rules::ErrorCode::BadArguments, "{}: {e:?}", path.display());
            assert!(e.detail.contains("file"), "{}: {}", path.display(), e.detail);
        }
        assert!(!target.exists(), "the link's target was never written through it");
        // Positive control: a regular file, new or existing, is written whole.
        write(dir.path(), &target, b"first, longer").expect("new file");
        write(dir.path(), &target, b"second").expect("existing file");
        assert_eq!(std::fs::read(&target).expect("read"), b"second");
    }
}
