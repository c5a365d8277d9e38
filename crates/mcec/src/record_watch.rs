//! Wakes the stop record's follower when the record's directory changes, and at the latest
//! after one poll interval.
//!
//! On Linux the directory is watched with inotify (through rustix, which the workspace already
//! builds, so no new crate): a deletion is seen the moment it happens, however quickly another
//! follows. The poll interval stays as the backstop, for what inotify misses: the directory
//! itself removed and made again, a watch that could not be placed yet (no directory), a full
//! event queue. Elsewhere (Windows) the follower polls alone.
//!
//! Only events that name this display's record file (or the directory itself) wake the
//! follower. Everything else in the directory stays asleep: other displays' records, the
//! atomic writer's temporary files, and above all the write probe, whose unnamed `O_TMPFILE`
//! is reported under a name like `#10166370`. A follower woken by its own probe probes again:
//! that loop once ran about a thousand times a second in every mcec.

use std::path::PathBuf;
use std::time::Duration;

/// Why [`RecordWatch::wait`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Woke {
    /// The record (or its directory) changed, or the watch cannot tell: look again.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code, reason = "only inotify reports a change"))]
    Changed,
    /// The poll interval passed.
    Polled,
}

pub struct RecordWatch {
    #[cfg(target_os = "linux")]
    inner: Option<linux::Inotify>,
    #[cfg(target_os = "linux")]
    record: Option<PathBuf>,
}

impl RecordWatch {
    /// A watch on the record file `record` (none when the home is unknown: then the poll alone).
    pub fn new(record: Option<PathBuf>) -> RecordWatch {
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
            RecordWatch { inner, record }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = record;
            RecordWatch {}
        }
    }

    /// Block until the record changed or `poll` passed.
    pub fn wait(&mut self, poll: Duration) -> Woke {
        #[cfg(target_os = "linux")]
        if let (Some(inotify), Some(record)) = (self.inner.as_mut(), self.record.as_ref())
            && let (Some(dir), Some(name)) = (record.parent(), record.file_name())
        {
            return inotify.wait(dir, name.as_encoded_bytes(), poll);
        }
        std::thread::sleep(poll);
        Woke::Polled
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

    use super::Woke;

    pub struct Inotify {
        fd: OwnedFd,
        watching: bool,
    }

    impl Inotify {
        pub fn new() -> rustix::io::Result<Inotify> {
            let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)?;
            Ok(Inotify { fd, watching: false })
        }

        pub fn wait(&mut self, dir: &Path, name: &[u8], timeout: Duration) -> Woke {
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
                return Woke::Polled;
            }
            let deadline = std::time::Instant::now() + timeout;
            loop {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    return Woke::Polled;
                }
                let spec =
                    Timespec { tv_sec: left.as_secs() as i64, tv_nsec: i64::from(left.subsec_nanos()) };
                let mut fds = [PollFd::new(&self.fd, PollFlags::IN)];
                match poll(&mut fds, Some(&spec)) {
                    Ok(0) => return Woke::Polled,
                    Ok(_) => {
                        if self.drain(name) {
                            return Woke::Changed;
                        }
                    }
                    Err(Errno::INTR) => {}
                    Err(_) => {
                        std::thread::sleep(left);
                        return Woke::Polled;
                    }
                }
            }
        }

        /// Read every pending event; true when one of them is about the record file `name`
        /// or the directory itself.
        fn drain(&mut self, name: &[u8]) -> bool {
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
                            matters |= event.file_name().is_none_or(|n| n.to_bytes() == name);
                        }
                    }
                    Err(Errno::INTR) => {}
                    Err(_) => return matters,
                }
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use std::time::{Duration, SystemTime};

        use mcec_rules::stop_record::Scope;

        use crate::record_watch::{RecordWatch, Woke};
        use crate::stop_record::{StopRecords, fresh_stop_id};

        #[test]
        fn only_the_record_itself_wakes_the_follower() {
            let tmp = tempfile::tempdir().expect("tempdir");
            let dir = tmp.path().join("stop");
            std::fs::create_dir(&dir).expect("mkdir");
            let mine = StopRecords::at(dir.clone(), Scope::Display(9));
            let mut watch = RecordWatch::new(mine.path());
            assert_eq!(watch.wait(Duration::ZERO), Woke::Polled, "placing the watch");
            // What a follower does after every wake, and what other writers leave beside it.
            mine.probe().expect("probe");
            StopRecords::at(dir.clone(), Scope::Display(8))
                .record("other", SystemTime::now(), fresh_stop_id())
                .expect("another display's record");
            std::fs::write(dir.join(".tmp-x"), b"x").expect("a dot file");
            assert_eq!(
                watch.wait(Duration::from_millis(50)),
                Woke::Polled,
                "woken by a file that is not the record"
            );
            mine.record("test", SystemTime::now(), fresh_stop_id()).expect("record");
            assert_eq!(watch.wait(Duration::from_secs(30)), Woke::Changed);
        }
    }
}
