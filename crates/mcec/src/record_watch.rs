//! Wakes the stop record's follower when the record's directory changes, and at the latest
//! after one poll interval.
//!
//! On Linux the directory is watched with inotify (through rustix, which the workspace already
//! builds, so no new crate): a deletion is seen the moment it happens, however quickly another
//! follows. The poll interval stays as the backstop, for what inotify misses: the directory
//! itself removed and made again, a watch that could not be placed yet (no directory), a full
//! event queue. Elsewhere (Windows) the follower polls alone.
//!
//! Names starting with a dot are the atomic writer's temporary files and the write probe;
//! their events do not wake the follower, so two followers' probes cannot wake each other in a
//! loop.

use std::path::PathBuf;
use std::time::Duration;

pub struct RecordWatch {
    #[cfg(target_os = "linux")]
    inner: Option<linux::Inotify>,
    #[cfg(target_os = "linux")]
    dir: Option<PathBuf>,
}

impl RecordWatch {
    /// A watch on `dir` (none when the home is unknown: then the poll alone).
    pub fn new(dir: Option<PathBuf>) -> RecordWatch {
        #[cfg(target_os = "linux")]
        {
            let inner = match linux::Inotify::new() {
                Ok(inotify) => Some(inotify),
                Err(e) => {
                    tracing::warn!(
                        "no inotify for the stop record ({e}); polling it every {:?} only",
                        crate::operator_side::RECORD_POLL
                    );
                    None
                }
            };
            RecordWatch { inner, dir }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = dir;
            RecordWatch {}
        }
    }

    /// Block until something in the directory changed or `poll` passed.
    pub fn wait(&mut self, poll: Duration) {
        #[cfg(target_os = "linux")]
        if let (Some(inotify), Some(dir)) = (self.inner.as_mut(), self.dir.as_ref()) {
            inotify.wait(dir, poll);
            return;
        }
        std::thread::sleep(poll);
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::mem::MaybeUninit;
    use std::path::Path;
    use std::time::Duration;

    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    use rustix::fd::OwnedFd;
    use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
    use rustix::io::Errno;

    pub struct Inotify {
        fd: OwnedFd,
        watching: bool,
    }

    impl Inotify {
        pub fn new() -> rustix::io::Result<Inotify> {
            let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)?;
            Ok(Inotify { fd, watching: false })
        }

        pub fn wait(&mut self, dir: &Path, timeout: Duration) {
            if !self.watching {
                let events = WatchFlags::CREATE
                    | WatchFlags::DELETE
                    | WatchFlags::MOVED_FROM
                    | WatchFlags::MOVED_TO
                    | WatchFlags::CLOSE_WRITE
                    | WatchFlags::ATTRIB
                    | WatchFlags::DELETE_SELF
                    | WatchFlags::MOVE_SELF
                    | WatchFlags::ONLYDIR;
                // Fails while the directory does not exist; the poll covers that time.
                self.watching = inotify::add_watch(&self.fd, dir, events).is_ok();
            }
            if !self.watching {
                std::thread::sleep(timeout);
                return;
            }
            let deadline = std::time::Instant::now() + timeout;
            loop {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    return;
                }
                let spec =
                    Timespec { tv_sec: left.as_secs() as i64, tv_nsec: i64::from(left.subsec_nanos()) };
                let mut fds = [PollFd::new(&self.fd, PollFlags::IN)];
                match poll(&mut fds, Some(&spec)) {
                    Ok(0) => return,
                    Ok(_) => {
                        if self.drain() {
                            return;
                        }
                    }
                    Err(Errno::INTR) => {}
                    Err(_) => {
                        std::thread::sleep(left);
                        return;
                    }
                }
            }
        }

        /// Read every pending event; true when one of them matters.
        fn drain(&mut self) -> bool {
            let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
            let mut reader = inotify::Reader::new(&self.fd, &mut buf);
            let mut matters = false;
            loop {
                match reader.next() {
                    Ok(event) => {
                        let flags = event.events();
                        if flags
                            .intersects(ReadFlags::IGNORED | ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF)
                        {
                            // The directory itself went: watch it again once it is back.
                            self.watching = false;
                            matters = true;
                        } else if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                            matters = true;
                        } else {
                            let hidden = event.file_name().is_some_and(|n| n.to_bytes().starts_with(b"."));
                            matters |= !hidden;
                        }
                    }
                    Err(Errno::INTR) => {}
                    Err(_) => return matters,
                }
            }
        }
    }
}
