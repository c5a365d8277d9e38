//! Which process started which, for `launch`'s "a window of a process its program started":
//! read from Linux's `/proc` (elsewhere the answer is "unknown").

/// The parent of `pid` per Linux's `/proc/<pid>/stat`.
pub(super) fn proc_parent(pid: u32) -> Option<u32> {
    mcec_desktop::proc_stat::parent_in_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn proc_names_this_process_parent() {
        let parent = super::proc_parent(std::process::id()).expect("a parent");
        assert_eq!(parent, std::os::unix::process::parent_id());
    }
}
