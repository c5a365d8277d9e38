//! The process table: who started a process, for `launch`'s rule that a window of a process
//! its program started counts as the program's (a launcher, `cmd /c`, `start /wait`).
//!
//! Windows keeps no parent link on a live process object; a Toolhelp snapshot lists every
//! process with the id of the one that created it. That id may outlive its process and be
//! reused, so the walk in `launch` is bounded and only ever matches the pid it started.

use windows_sys::Win32::Foundation::{CloseHandle, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW, Process32NextW, TH32CS_SNAPPROCESS,
};

/// The id of the process that created `pid`, when the snapshot lists `pid`.
pub(super) fn parent_of(pid: u32) -> Option<u32> {
    // SAFETY: the snapshot handle is checked and closed; PROCESSENTRY32W is plain data whose
    // dwSize tells the walk its size.
    unsafe {
        let snapshot = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
        if snapshot == INVALID_HANDLE_VALUE {
            return None;
        }
        let mut entry: PROCESSENTRY32W = std::mem::zeroed();
        entry.dwSize = std::mem::size_of::<PROCESSENTRY32W>() as u32;
        let mut found = None;
        let mut more = Process32FirstW(snapshot, &mut entry) != 0;
        while more {
            if entry.th32ProcessID == pid {
                found = Some(entry.th32ParentProcessID);
                break;
            }
            more = Process32NextW(snapshot, &mut entry) != 0;
        }
        CloseHandle(snapshot);
        found
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_child_names_this_process_as_its_parent() {
        use std::process::{Command, Stdio};
        // cmd.exe reading commands from a pipe lives until the pipe closes.
        let mut child = Command::new("cmd.exe")
            .arg("/q")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("cmd.exe starts");
        let parent = super::parent_of(child.id());
        drop(child.stdin.take());
        let _ = child.wait();
        assert_eq!(parent, Some(std::process::id()));
        assert_eq!(super::parent_of(0xFFFF_FFF0), None);
    }
}
