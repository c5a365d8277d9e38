//! Windows forms of [`crate::os`].
//!
//! There is no mode to set: files under the user's profile (`%LOCALAPPDATA%`, `%APPDATA%`)
//! inherit an ACL that admits the user, SYSTEM and Administrators only, and a manual copy's
//! directory is the operator's choice. Opens use `FILE_FLAG_OPEN_REPARSE_POINT`, so a symlink
//! or junction is opened as itself and then refused by the caller as not a regular file.

mod places;
pub use places::*;

use std::fs::Metadata;
use std::fs::{DirBuilder, File, FileType, OpenOptions};
use std::io::{self, ErrorKind};
use std::os::windows::ffi::OsStrExt;
use std::os::windows::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use windows_sys::Win32::Storage::FileSystem::{
    FILE_FLAG_OPEN_REPARSE_POINT, MOVEFILE_WRITE_THROUGH, MoveFileExW,
};

/// Nothing to add: the profile's inherited ACL already keeps the file to its user.
pub fn private_file(options: &mut OpenOptions) -> &mut OpenOptions {
    options
}

/// Nothing to add: the profile's inherited ACL already keeps the directory to its user.
pub fn private_dir(builder: &mut DirBuilder) -> &mut DirBuilder {
    builder
}

/// Nothing to do: an `.exe` is runnable by whoever may read it.
pub fn private_executable(_path: &Path) -> io::Result<()> {
    Ok(())
}

/// A whole copy of `source` at `dest`. ReFS block cloning (`FSCTL_DUPLICATE_EXTENTS_TO_FILE`)
/// is left out: NTFS, where a profile usually lives, has none.
pub fn clone_or_copy(source: &Path, dest: &Path) -> io::Result<super::CopyWay> {
    std::fs::copy(source, dest)?;
    Ok(super::CopyWay::Copy)
}

/// Opens the path itself: a symlink or junction is not followed (the caller sees its type).
pub fn open_no_follow(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    options.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT).open(path)
}

/// What a file type that is not a regular file is, in words.
pub fn kind_in_words(kind: &FileType) -> &'static str {
    if kind.is_symlink() {
        "a symbolic link or junction"
    } else if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Whether an open error itself says the path is not a regular file (a directory cannot be
/// opened as a file: access denied).
pub fn open_error_is_not_regular(_error: &io::Error) -> bool {
    false
}

/// An open error in words: opening a directory as a file fails with "access denied", which
/// is said as what it is.
pub fn explain_open_error(path: &Path, e: io::Error) -> io::Error {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.file_type().is_file() => io::Error::new(
            ErrorKind::InvalidInput,
            format!("{} is {}, not a regular file", path.display(), kind_in_words(&meta.file_type())),
        ),
        _ => e,
    }
}

/// Renames `from` to `to` in one step that fails if anything exists at `to`
/// (`MoveFileExW` without `MOVEFILE_REPLACE_EXISTING`).
pub fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    let wide = |p: &Path| p.as_os_str().encode_wide().chain(Some(0)).collect::<Vec<u16>>();
    let (from, to) = (wide(from), wide(to));
    #[allow(unsafe_code, reason = "MoveFileExW is the Win32 rename that can refuse to replace")]
    // SAFETY: both pointers are NUL-terminated UTF-16 strings that live across the call.
    let ok = unsafe { MoveFileExW(from.as_ptr(), to.as_ptr(), MOVEFILE_WRITE_THROUGH) };
    if ok == 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}

/// Nothing to do: NTFS journals directory entries, and a directory cannot be opened for
/// flushing without backup semantics.
pub fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

/// What [`super::lock_dir`] locks for a directory being built: its `.mcec.lock` (Windows
/// cannot lock a directory handle, so `LockFileEx` goes on this file).
pub fn open_dir_lock(dir: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true);
    let path = dir.join(crate::paths::LOCK_FILE);
    let file = open_no_follow(&path, &mut options)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    Ok(file)
}

/// Quotes `s` for `cmd.exe` (a path cannot hold `"`, so double quotes suffice).
pub fn shell_quote(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "\\/._-+:@,=".contains(c);
    if !s.is_empty() && s.chars().all(safe) { s.to_string() } else { format!("\"{s}\"") }
}

/// Nothing to do: the profile's inherited ACL already keeps the file to its user.
pub fn narrow_to_owner(_file: &File) -> io::Result<()> {
    Ok(())
}

/// What tells one file from another that replaced it at the same path. The file index is not
/// in stable `std`, so the creation time stands in (a file made by a rotation is newer).
pub fn file_identity(meta: &Metadata) -> (u64, u64) {
    (0, meta.creation_time())
}

/// Refuses to delete `top` when a directory inside it resolves outside it. `remove_dir_all`
/// never enters a symlink or junction Windows reports as one; this also catches a link the file
/// system shows as a plain directory (Wine shows a Unix symlink so, and its own `rmdir /s`
/// then empties the target). Nothing is deleted when it refuses; the tombstone stays.
pub fn refuse_links_out_of(top: &Path) -> io::Result<()> {
    let real_top = top.canonicalize()?;
    let mut pending = vec![top.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            let kind = std::fs::symlink_metadata(&path)?.file_type();
            if kind.is_symlink() || !kind.is_dir() {
                continue;
            }
            if !path.canonicalize()?.starts_with(&real_top) {
                return Err(io::Error::new(
                    ErrorKind::PermissionDenied,
                    format!("{} leads outside {}; nothing was deleted", path.display(), top.display()),
                ));
            }
            pending.push(path);
        }
    }
    Ok(())
}

/// Windows keeps no table of who holds a lock that a process can read, so nobody is believed
/// to hold one (a display's guard is Unix-only).
pub fn kernel_lock_holder(_file: &File) -> Option<u32> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::os::{dir_lock_is_held, lock_dir};

    #[test]
    fn a_held_dir_lock_blocks_a_second_one_until_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(!dir_lock_is_held(dir.path()), "positive control: nothing holds it yet");
        let held = lock_dir(dir.path()).expect("first lock");
        assert!(dir_lock_is_held(dir.path()));
        assert_eq!(lock_dir(dir.path()).expect_err("second lock").kind(), ErrorKind::WouldBlock);
        drop(held);
        assert!(!dir_lock_is_held(dir.path()));
    }

    #[test]
    fn the_instance_lock_conflicts_between_handles() {
        let dir = tempfile::tempdir().expect("tempdir");
        let held = crate::InstanceLock::acquire(dir.path()).expect("first");
        assert!(crate::is_locked(dir.path()));
        assert!(matches!(
            crate::InstanceLock::acquire(dir.path()),
            Err(crate::LockError::HeldByOther { .. })
        ));
        held.release();
        assert!(!crate::is_locked(dir.path()));
    }

    #[test]
    fn rename_never_replaces() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir(&a).expect("mkdir a");
        std::fs::create_dir(&b).expect("mkdir b");
        std::fs::write(b.join("keep"), b"keep").expect("write");
        assert!(rename_no_replace(&a, &b).is_err());
        assert_eq!(std::fs::read(b.join("keep")).expect("kept"), b"keep");
        let c = dir.path().join("c");
        rename_no_replace(&a, &c).expect("a free name is taken");
        assert!(c.is_dir() && !a.exists());
    }

    #[test]
    fn a_plain_tree_passes_the_link_check() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("a").join("b")).expect("mkdir");
        std::fs::write(dir.path().join("a").join("b").join("f"), b"x").expect("write");
        refuse_links_out_of(dir.path()).expect("nothing leads out");
    }
}
