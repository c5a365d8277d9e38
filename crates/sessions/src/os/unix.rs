//! Unix forms of [`crate::os`].

mod copy;
mod lock_holder;
mod places;
pub use copy::*;
pub use lock_holder::*;
pub use places::*;

use std::fs::Metadata;
use std::fs::{DirBuilder, File, FileType, OpenOptions};
use std::io::{self, ErrorKind};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Flags every open in a session or config directory uses.
const SAFE_FLAGS: i32 = libc::O_NOFOLLOW | libc::O_NONBLOCK;

/// A new file only its owner can read and write (mode 0600).
pub fn private_file(options: &mut OpenOptions) -> &mut OpenOptions {
    options.mode(0o600)
}

/// A new directory only its owner can enter (mode 0700).
pub fn private_dir(builder: &mut DirBuilder) -> &mut DirBuilder {
    builder.mode(0o700)
}

/// A copied executable only its owner can run (mode 0700).
pub fn private_executable(path: &Path) -> io::Result<()> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
}

/// Opens without following a symlink and without waiting on a FIFO.
pub fn open_no_follow(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    options.custom_flags(SAFE_FLAGS).open(path)
}

/// What a file type that is not a regular file is, in words.
pub fn kind_in_words(kind: &FileType) -> &'static str {
    if kind.is_dir() {
        "a directory"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

/// Whether an open error itself says the path is not a regular file.
pub fn open_error_is_not_regular(error: &io::Error) -> bool {
    matches!(error.raw_os_error(), Some(libc::ELOOP | libc::ENXIO))
}

/// An open error in words that name what was found.
pub fn explain_open_error(path: &Path, e: io::Error) -> io::Error {
    match e.raw_os_error() {
        Some(libc::ELOOP) => io::Error::new(
            ErrorKind::InvalidInput,
            format!("{} is a symbolic link, which mcec does not follow here", path.display()),
        ),
        // Opening a socket, or a FIFO for writing with no reader.
        Some(libc::ENXIO) => io::Error::new(
            ErrorKind::InvalidInput,
            format!("{} is a socket or FIFO, not a regular file", path.display()),
        ),
        Some(libc::EISDIR) => io::Error::new(
            ErrorKind::InvalidInput,
            format!("{} is a directory, not a regular file", path.display()),
        ),
        _ => e,
    }
}

/// Renames `from` to `to` in one step that fails if anything exists at `to`.
pub fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    rustix::fs::renameat_with(rustix::fs::CWD, from, rustix::fs::CWD, to, rustix::fs::RenameFlags::NOREPLACE)
        .map_err(io::Error::from)
}

/// Flushes a directory's entries to disk.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// What [`super::lock_dir`] locks: the directory `dir` itself (a `flock` on its
/// descriptor), opened without following a symlink.
pub fn open_dir_lock(dir: &Path) -> io::Result<File> {
    OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW).open(dir)
}

/// Quotes `s` for a POSIX shell when it holds anything beyond a safe set.
pub fn shell_quote(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Narrows an open file that others may read to owner-only (0600).
pub fn narrow_to_owner(file: &File) -> io::Result<()> {
    if file.metadata()?.mode() & 0o777 != 0o600 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

/// What tells one file from another that replaced it at the same path: device and inode.
pub fn file_identity(meta: &Metadata) -> (u64, u64) {
    (meta.dev(), meta.ino())
}

/// Nothing to check: `remove_dir_all` works through directory descriptors opened with
/// `O_NOFOLLOW`, so no link is ever followed.
pub fn refuse_links_out_of(_top: &Path) -> io::Result<()> {
    Ok(())
}
