//! Monitors: `EnumDisplayMonitors`, each monitor's bounds, device name, primary flag and DPI.

use std::sync::OnceLock;

use mcec_desktop::types::{DisplayInfo, Dpi, DpiSource, Rect};
use mcec_rules::ToolError;
use windows_sys::Win32::Foundation::{LPARAM, RECT};
use windows_sys::Win32::Graphics::Gdi::{
    EnumDisplayMonitors, GetDC, GetDeviceCaps, GetMonitorInfoW, HDC, HMONITOR, LOGPIXELSX, MONITORINFO,
    MONITORINFOEXW, ReleaseDC,
};
use windows_sys::Win32::System::LibraryLoader::{GetProcAddress, LoadLibraryW};
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
            dpi: monitor_dpi(m),
        });
    }
    Ok(out)
}

/// `GetDpiForMonitor(monitor, type, x, y) -> HRESULT`.
type GetDpiForMonitorFn = unsafe extern "system" fn(HMONITOR, i32, *mut u32, *mut u32) -> i32;

/// `GetDpiForMonitor` from shcore.dll (Windows 8.1 and later), looked up once at run time so
/// mcec still starts where it is missing.
fn get_dpi_for_monitor() -> Option<GetDpiForMonitorFn> {
    static FOUND: OnceLock<Option<GetDpiForMonitorFn>> = OnceLock::new();
    *FOUND.get_or_init(|| {
        let shcore: Vec<u16> = "shcore.dll\0".encode_utf16().collect();
        // SAFETY: the names are NUL-terminated; the pointer is GetDpiForMonitor, whose
        // documented signature is `GetDpiForMonitorFn`.
        unsafe {
            let module = LoadLibraryW(shcore.as_ptr());
            if module.is_null() {
                return None;
            }
            let f = GetProcAddress(module, c"GetDpiForMonitor".as_ptr().cast())?;
            Some(std::mem::transmute::<unsafe extern "system" fn() -> isize, GetDpiForMonitorFn>(f))
        }
    })
}

/// The DPI programs draw at on `monitor`: its effective DPI, or the system DPI when the
/// per-monitor call is missing or fails.
fn monitor_dpi(monitor: HMONITOR) -> Dpi {
    const MDT_EFFECTIVE_DPI: i32 = 0;
    if let Some(get) = get_dpi_for_monitor() {
        let (mut x, mut y) = (0u32, 0u32);
        // SAFETY: `monitor` came from EnumDisplayMonitors; `x` and `y` outlive the call.
        let hr = unsafe { get(monitor, MDT_EFFECTIVE_DPI, &mut x, &mut y) };
        if hr >= 0 && x > 0 {
            return Dpi::new(x, DpiSource::Monitor, None);
        }
        tracing::debug!("GetDpiForMonitor failed (HRESULT {hr:#x}); using the system DPI");
    }
    system_dpi()
}

/// The system DPI (`LOGPIXELSX` of the screen), 96 when even that is not answered.
fn system_dpi() -> Dpi {
    // SAFETY: the screen DC is released before return; GetDeviceCaps only reads it.
    let dpi = unsafe {
        let dc = GetDC(std::ptr::null_mut());
        if dc.is_null() {
            return Dpi::assumed();
        }
        let dpi = GetDeviceCaps(dc, LOGPIXELSX as i32);
        ReleaseDC(std::ptr::null_mut(), dc);
        dpi
    };
    match u32::try_from(dpi) {
        Ok(d) if d > 0 => Dpi::new(d, DpiSource::System, None),
        _ => Dpi::assumed(),
    }
}

impl mcec_desktop::seams::Screens for super::WindowsDesktop {
    fn displays(&self) -> Result<Vec<DisplayInfo>, ToolError> {
        displays()
    }

    fn capture(&self, area: Rect) -> Result<mcec_desktop::types::Captured, ToolError> {
        self.capture_area(area)
    }
}
