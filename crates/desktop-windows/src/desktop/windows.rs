//! Top-level windows: `EnumWindows` for the list, `ShowWindow`/`SetWindowPos`/
//! `SetForegroundWindow` for the operations.
//!
//! A window is listed when it is visible, unowned and not a tool window (what the task bar
//! shows). The process name is the executable's file stem, lower-cased (`notepad` for
//! `C:\Windows\NOTEPAD.EXE`; Windows names are case-insensitive), as `/proc/<pid>/comm`
//! gives it on Linux, so mcec's own-window rule reads the same on both; the instance is that
//! stem too, as Windows has no `WM_CLASS` instance. mcec's own windows are left out of the
//! list and refused as targets.

use mcec_desktop::seams::{WindowManager, WindowOp};
use mcec_desktop::types::WindowInfo;
use mcec_rules::{ErrorCode, ToolError};
use windows_sys::Win32::Foundation::{CloseHandle, HWND, LPARAM, RECT};
use windows_sys::Win32::System::Threading::{
    OpenProcess, PROCESS_NAME_WIN32, PROCESS_QUERY_LIMITED_INFORMATION, QueryFullProcessImageNameW,
};
use windows_sys::Win32::UI::Input::KeyboardAndMouse::VK_MENU;
use windows_sys::Win32::UI::WindowsAndMessaging::{
    EnumWindows, GW_OWNER, GWL_EXSTYLE, GetClassNameW, GetForegroundWindow, GetWindow, GetWindowLongPtrW,
    GetWindowRect, GetWindowTextLengthW, GetWindowTextW, GetWindowThreadProcessId, IsIconic, IsWindow,
    IsWindowVisible, SW_MAXIMIZE, SW_MINIMIZE, SW_RESTORE, SWP_NOACTIVATE, SWP_NOMOVE, SWP_NOSIZE,
    SWP_NOZORDER, SetForegroundWindow, SetWindowPos, ShowWindow, WS_EX_TOOLWINDOW,
};
use windows_sys::core::BOOL;

use super::screens::rect_of;
use super::{WindowsDesktop, inject_err, win_err};
use crate::inject;

fn hwnd_of(id: u64) -> HWND {
    id as usize as HWND
}

fn closed(id: u64) -> ToolError {
    ToolError::new(
        ErrorCode::WindowClosed,
        format!("Window {id} closed (or was destroyed) while mcec was using it."),
    )
}

unsafe extern "system" fn collect(hwnd: HWND, data: LPARAM) -> BOOL {
    // SAFETY: `data` is the `&mut Vec<HWND>` that `top_levels` passed; it outlives the call.
    let list = unsafe { &mut *(data as *mut Vec<HWND>) };
    list.push(hwnd);
    1
}

/// Every top-level window, in Z order (topmost first).
fn top_levels() -> Result<Vec<HWND>, ToolError> {
    let mut all: Vec<HWND> = Vec::new();
    // SAFETY: the callback only pushes into `all`, which lives across the call.
    if unsafe { EnumWindows(Some(collect), &mut all as *mut Vec<HWND> as LPARAM) } == 0 {
        return Err(win_err("EnumWindows"));
    }
    Ok(all)
}

/// Whether the task bar would show it: visible, unowned, not a tool window.
fn is_app_window(hwnd: HWND) -> bool {
    // SAFETY: plain queries on a window handle; a stale handle just answers 0.
    unsafe {
        IsWindowVisible(hwnd) != 0
            && GetWindow(hwnd, GW_OWNER).is_null()
            && (GetWindowLongPtrW(hwnd, GWL_EXSTYLE) as u32) & WS_EX_TOOLWINDOW == 0
    }
}

pub(super) fn text_of(hwnd: HWND) -> String {
    // SAFETY: the buffer is one longer than the reported length, for the NUL.
    unsafe {
        let len = GetWindowTextLengthW(hwnd).max(0) as usize;
        let mut buf = vec![0u16; len + 1];
        let got = GetWindowTextW(hwnd, buf.as_mut_ptr(), buf.len() as i32).max(0) as usize;
        String::from_utf16_lossy(&buf[..got.min(len)])
    }
}

fn class_of(hwnd: HWND) -> String {
    let mut buf = [0u16; 256];
    // SAFETY: `buf` holds 256 units, as passed.
    let got = unsafe { GetClassNameW(hwnd, buf.as_mut_ptr(), buf.len() as i32) }.max(0) as usize;
    String::from_utf16_lossy(&buf[..got])
}

/// The executable's file stem of `pid`, when Windows lets us open it.
pub(super) fn process_name(pid: u32) -> Option<String> {
    // SAFETY: the handle is checked and closed; the buffer size is passed in and out.
    let path = unsafe {
        let h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
        if h.is_null() {
            return None;
        }
        let mut buf = vec![0u16; 1024];
        let mut len = buf.len() as u32;
        let ok = QueryFullProcessImageNameW(h, PROCESS_NAME_WIN32, buf.as_mut_ptr(), &mut len);
        CloseHandle(h);
        if ok == 0 {
            return None;
        }
        String::from_utf16_lossy(&buf[..len as usize])
    };
    stem_of(&path)
}

/// `C:\Windows\Notepad.exe` → `notepad`.
pub(crate) fn stem_of(path: &str) -> Option<String> {
    let file = path.rsplit(['\\', '/']).next()?;
    let stem = match file.rfind('.') {
        Some(i) if file[i..].eq_ignore_ascii_case(".exe") => &file[..i],
        _ => file,
    };
    (!stem.is_empty()).then(|| stem.to_lowercase())
}

/// The facts about one window, or `None` when it is gone.
fn info_of(hwnd: HWND, foreground: HWND) -> Option<WindowInfo> {
    let mut pid = 0u32;
    let mut rect: RECT = RECT { left: 0, top: 0, right: 0, bottom: 0 };
    // SAFETY: plain queries on a window handle into locals.
    unsafe {
        if IsWindow(hwnd) == 0 || GetWindowRect(hwnd, &mut rect) == 0 {
            return None;
        }
        GetWindowThreadProcessId(hwnd, &mut pid);
    }
    let process = (pid != 0).then(|| process_name(pid)).flatten();
    Some(WindowInfo {
        id: hwnd as usize as u64,
        title: text_of(hwnd),
        class_name: class_of(hwnd),
        instance: process.clone().unwrap_or_default(),
        pid: (pid != 0).then_some(pid),
        process,
        bounds: Some(rect_of(&rect)),
        bounds_unavailable: None,
        foreground: hwnd == foreground,
        // SAFETY: plain query.
        minimized: unsafe { IsIconic(hwnd) } != 0,
    })
}

impl WindowsDesktop {
    /// Every app window, mcec's own included (the capture path needs them to leave them out).
    pub(super) fn all_windows(&self) -> Result<Vec<WindowInfo>, ToolError> {
        // SAFETY: plain query.
        let fg = unsafe { GetForegroundWindow() };
        Ok(top_levels()?.into_iter().filter(|h| is_app_window(*h)).filter_map(|h| info_of(h, fg)).collect())
    }

    fn bring_to_front(&self, hwnd: HWND) -> Result<(), ToolError> {
        // SAFETY: plain calls on a window handle.
        unsafe {
            if IsIconic(hwnd) != 0 {
                ShowWindow(hwnd, SW_RESTORE);
            }
            if SetForegroundWindow(hwnd) != 0 {
                return Ok(());
            }
        }
        // Windows lets the process that got the last input event move the foreground: a
        // marked Alt tap makes it us, then the request is honoured.
        inject::send_keys(&[(VK_MENU, true), (VK_MENU, false)], inject::Mark::Mcec).map_err(inject_err)?;
        // SAFETY: as above.
        if unsafe { SetForegroundWindow(hwnd) } == 0 {
            return Err(ToolError::new(
                ErrorCode::Focus,
                "Windows did not let mcec bring that window to the front.",
            ));
        }
        Ok(())
    }
}

impl WindowManager for WindowsDesktop {
    fn list_windows(&self) -> Result<Vec<WindowInfo>, ToolError> {
        Ok(self.all_windows()?.into_iter().filter(|w| !w.is_mcecs_own()).collect())
    }

    fn window_info(&self, id: u64) -> Result<WindowInfo, ToolError> {
        // SAFETY: plain query.
        let fg = unsafe { GetForegroundWindow() };
        let info = info_of(hwnd_of(id), fg).ok_or_else(|| closed(id))?;
        if info.is_mcecs_own() {
            return Err(ToolError::new(
                ErrorCode::WindowNotFound,
                format!("Window {id} is one of mcec's own windows, which no tool can target."),
            ));
        }
        Ok(info)
    }

    fn parent_process(&self, pid: u32) -> Option<u32> {
        super::process::parent_of(pid)
    }

    fn window_op(&self, id: u64, op: WindowOp) -> Result<(), ToolError> {
        self.window_info(id)?;
        let hwnd = hwnd_of(id);
        let keep = SWP_NOZORDER | SWP_NOACTIVATE;
        // SAFETY: plain calls on a window handle that existed a moment ago; a stale one fails.
        let ok = unsafe {
            match op {
                WindowOp::Move(p) => {
                    SetWindowPos(hwnd, std::ptr::null_mut(), p.x, p.y, 0, 0, keep | SWP_NOSIZE)
                }
                WindowOp::Resize { width, height } => SetWindowPos(
                    hwnd,
                    std::ptr::null_mut(),
                    0,
                    0,
                    width.min(i32::MAX as u32) as i32,
                    height.min(i32::MAX as u32) as i32,
                    keep | SWP_NOMOVE,
                ),
                // ShowWindow answers whether the window was visible before, not success.
                WindowOp::Minimize => {
                    ShowWindow(hwnd, SW_MINIMIZE);
                    1
                }
                WindowOp::Maximize => {
                    ShowWindow(hwnd, SW_MAXIMIZE);
                    1
                }
                WindowOp::Restore => {
                    ShowWindow(hwnd, SW_RESTORE);
                    1
                }
                WindowOp::Foreground => return self.bring_to_front(hwnd),
            }
        };
        if ok == 0 {
            // SAFETY: plain query.
            return Err(if unsafe { IsWindow(hwnd) } == 0 { closed(id) } else { win_err("SetWindowPos") });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::stem_of;

    #[test]
    fn process_names_are_file_stems() {
        assert_eq!(stem_of(r"C:\Windows\notepad.exe").as_deref(), Some("notepad"));
        assert_eq!(stem_of(r"C:\x\MCEC.EXE").as_deref(), Some("mcec"));
        assert_eq!(stem_of(r"C:\x\tool.com").as_deref(), Some("tool.com"));
        assert_eq!(stem_of(r"C:\x\"), None);
    }
}
