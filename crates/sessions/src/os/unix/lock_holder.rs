//! Who holds a `flock` on a file, as the kernel says (`/proc/locks`), not as the file says.
//!
//! A lock file's pid is written by its holder, and any process of the user can write it too;
//! the kernel's table cannot be written. A display's guard is believed only when its pid is
//! the kernel's holder of the guard lock.

use std::fs::File;
use std::os::unix::fs::MetadataExt;

/// The pid the kernel lists for the `FLOCK` held on `file`'s inode, `None` when nobody holds
/// one or `/proc/locks` cannot be read (the caller then believes nobody).
pub fn kernel_lock_holder(file: &File) -> Option<u32> {
    let meta = file.metadata().ok()?;
    let table = std::fs::read_to_string("/proc/locks").ok()?;
    let dev = meta.dev();
    let id = (rustix::fs::major(dev), rustix::fs::minor(dev), meta.ino());
    flock_holder(&table, id)
}

/// The holder of the `FLOCK` on the inode `(major, minor, inode)` in a `/proc/locks` text, whose
/// lines read `1: FLOCK  ADVISORY  WRITE 4242 fd:01:131 0 EOF` (device numbers in hex; lines
/// starting `->` are waiters, not holders).
fn flock_holder(table: &str, (major, minor, inode): (u32, u32, u64)) -> Option<u32> {
    table.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.get(1) != Some(&"FLOCK") {
            return None;
        }
        let pid: u32 = fields.get(4)?.parse().ok()?;
        let mut place = fields.get(5)?.split(':');
        let (maj, min, ino) = (place.next()?, place.next()?, place.next()?);
        let same = u32::from_str_radix(maj, 16).ok()? == major
            && u32::from_str_radix(min, 16).ok()? == minor
            && ino.parse::<u64>().ok()? == inode;
        same.then_some(pid)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "1: POSIX  ADVISORY  WRITE 77 fd:01:500 0 EOF\n\
                         2: FLOCK  ADVISORY  WRITE 4242 fd:01:131 0 EOF\n\
                         2: -> FLOCK  ADVISORY  WRITE 99 fd:01:131 0 EOF\n\
                         3: FLOCK  ADVISORY  WRITE 13 00:2a:131 0 EOF\n";

    #[test]
    fn the_holder_is_the_flock_on_that_very_inode() {
        assert_eq!(flock_holder(TABLE, (0xfd, 1, 131)), Some(4242));
        assert_eq!(flock_holder(TABLE, (0, 0x2a, 131)), Some(13), "same inode number, other device");
        assert_eq!(flock_holder(TABLE, (0xfd, 1, 500)), None, "a POSIX lock is not the guard's flock");
        assert_eq!(flock_holder(TABLE, (0xfd, 1, 999)), None);
        assert_eq!(flock_holder("", (0xfd, 1, 131)), None);
    }

    #[test]
    fn a_held_flock_is_found_in_the_real_table_and_gone_once_released() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = File::create(dir.path().join("l.lock")).expect("create");
        assert_eq!(kernel_lock_holder(&file), None);
        file.try_lock().expect("lock");
        assert_eq!(kernel_lock_holder(&file), Some(std::process::id()));
        file.unlock().expect("unlock");
        assert_eq!(kernel_lock_holder(&file), None);
    }
}
