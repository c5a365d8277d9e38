//! Monitors: `EnumDisplayMonitors`, each monitor's bounds, device name and primary flag.

use mcec_desktop::types::{DisplayInfo, Rect};
use mcec_rules::ToolError;
use windows_sys::Win32::Foundation::{LPARAM, RECT};
use windows_sys::Win32::Graphics::Gdi::{
    EnumDisplayMonitors, GetMonitorInfoW, HDC, HMONITOR, MONITORINFO, MONITORINFOEXW,
};
use windows_sys::Win32::UI::WindowsAndMessaging::MONITORINFOF_PRIMARY;
use windows_sys::core::BOOL;

use super::win_err;

/// A `RECT` as a [`Rect`] (an inverted one becomes empty).
pub(super) fn rect_of(r: &RECT) -> Rect {
    let w = i64::from(r.right) - i64::from(r.left);
    let h = i64::from(r.bottom) - i64::from(r.top);
    Rect::new(r.left, r.top, w.clamp(0, i64::from(u32::MAX)) as u32, h.clamp(0, i64::from(u32::MAX)) as u32)
}

unsafe extern "system" fn collect(monitor: HMONITOR, _dc: HDC, _clip: *mut RECT, data: LPARAM) -> BOOL {
    // SAFETY: `data` is the `&mut Vec<HMONITOR>` that `monitors` passed; it outlives the call.
    let list = unsafe { &mut *(data as *mut Vec<HMONITOR>) };
    list.push(monitor);
    1
}

/// The monitors in the order Windows enumerates them.
pub(super) fn displays() -> Result<Vec<DisplayInfo>, ToolError> {
    let mut monitors: Vec<HMONITOR> = Vec::new();
    // SAFETY: the callback only pushes into `monitors`, which lives across the call.
    let ok = unsafe {
        EnumDisplayMonitors(
            std::ptr::null_mut(),
            std::ptr::null(),
            Some(collect),
            &mut monitors as *mut Vec<HMONITOR> as LPARAM,
        )
    };
    if ok == 0 {
        return Err(win_err("EnumDisplayMonitors"));
    }
    let mut out = Vec::with_capacity(monitors.len());
    for (index, m) in monitors.into_iter().enumerate() {
        // SAFETY: MONITORINFOEXW is plain data; cbSize tells GetMonitorInfoW its size.
        let mut info: MONITORINFOEXW = unsafe { std::mem::zeroed() };
        info.monitorInfo.cbSize = std::mem::size_of::<MONITORINFOEXW>() as u32;
        // SAFETY: `info` is a valid, sized MONITORINFOEXW.
        if unsafe { GetMonitorInfoW(m, &mut info as *mut MONITORINFOEXW as *mut MONITORINFO) } == 0 {
            // The monitor went away between the two calls.
            continue;
        }
        let name_len = info.szDevice.iter().position(|c| *c == 0).unwrap_or(info.szDevice.len());
        out.push(DisplayInfo {
            index: index as u32,
            name: String::from_utf16_lossy(&info.szDevice[..name_len]),
            primary: info.monitorInfo.dwFlags & MONITORINFOF_PRIMARY != 0,
            bounds: rect_of(&info.monitorInfo.rcMonitor),
        });
    }
    Ok(out)
}

impl mcec_desktop::seams::Screens for super::WindowsDesktop {
    fn displays(&self) -> Result<Vec<DisplayInfo>, ToolError> {
        displays()
    }

    fn capture(&self, area: Rect) -> Result<mcec_desktop::types::Captured, ToolError> {
        self.capture_area(area)
    }
}
