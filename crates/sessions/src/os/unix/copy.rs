//! The session copy of the executable, made as cheaply as the file system allows: on Linux a
//! reflink (`ioctl(FICLONE)`), which shares the installed binary's blocks copy-on-write, so a
//! session costs no data blocks for its 31 MB binary and writing either file never changes the
//! other; anywhere it cannot (ext4, tmpfs, another file system than the source's), a copy of
//! the bytes.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::super::CopyWay;

/// Makes `dest` (which must not exist; created 0700, never through a symlink) hold the bytes of
/// `source`: a reflink where the file system can, else a copy.
pub fn clone_or_copy(source: &Path, dest: &Path) -> io::Result<CopyWay> {
    let mut from = File::open(source)?;
    let mut to = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o700)
        .custom_flags(super::SAFE_FLAGS)
        .open(dest)?;
    if try_reflink(&from, &to, dest) {
        return Ok(CopyWay::Reflink);
    }
    io::copy(&mut from, &mut to)?;
    Ok(CopyWay::Copy)
}

/// Whether `to` now shares `from`'s blocks. A failed clone leaves `to` empty: the kernel says
/// `EOPNOTSUPP` (no reflinks here), `EXDEV` (another file system), `EINVAL` and the like.
#[cfg(target_os = "linux")]
fn try_reflink(from: &File, to: &File, dest: &Path) -> bool {
    match rustix::fs::ioctl_ficlone(to, from) {
        Ok(()) => true,
        Err(e) => {
            tracing::debug!("no reflink for {}: {e}; copying the bytes", dest.display());
            false
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn try_reflink(_from: &File, _to: &File, _dest: &Path) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// tmpfs has no reflinks, so the clone must fail there and the bytes be copied.
    #[cfg(target_os = "linux")]
    #[test]
    fn without_reflinks_the_bytes_are_copied() {
        let shm = Path::new("/dev/shm");
        let is_tmpfs = rustix::fs::statfs(shm).is_ok_and(|s| s.f_type == libc::TMPFS_MAGIC);
        if !is_tmpfs {
            eprintln!("SKIPPED: /dev/shm is not a tmpfs here, so no file system is sure to refuse FICLONE");
            return;
        }
        let dir = tempfile::tempdir_in(shm).expect("tempdir");
        let (source, dest) = (dir.path().join("mcec"), dir.path().join("copy"));
        std::fs::write(&source, b"the installed binary").expect("write");
        assert_eq!(clone_or_copy(&source, &dest).expect("copy"), CopyWay::Copy);
        assert_eq!(std::fs::read(&dest).expect("read"), b"the installed binary");
    }

    #[test]
    fn the_copy_is_private_new_and_separate() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (source, dest) = (dir.path().join("mcec"), dir.path().join("copy"));
        std::fs::write(&source, b"the installed binary").expect("write");
        let way = clone_or_copy(&source, &dest).expect("copy");
        eprintln!("made by {}", way.as_str());
        assert_eq!(std::fs::metadata(&dest).expect("stat").permissions().mode() & 0o777, 0o700);
        std::fs::write(&dest, b"changed").expect("write the copy");
        assert_eq!(std::fs::read(&source).expect("read"), b"the installed binary");
        let again = clone_or_copy(&source, &dest).expect_err("an existing file is never replaced");
        assert_eq!(again.kind(), io::ErrorKind::AlreadyExists);
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &link).expect("symlink");
        assert!(clone_or_copy(&source, &link).is_err(), "a symlink at the destination is not followed");
        assert!(!dir.path().join("elsewhere").exists());
    }
}
