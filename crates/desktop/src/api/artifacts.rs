//! Where tool output files go: an explicit absolute path as given, anything else inside the
//! instance's artefact directory (so tearing a session down removes them). Nothing lands in
//! `/tmp` by default.

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

/// Write `bytes` to `path`, creating the artefact directory as needed.
pub(crate) fn write(artifact_dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), ToolError> {
    prepare(artifact_dir, path)?;
    std::fs::write(path, bytes)
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
}
