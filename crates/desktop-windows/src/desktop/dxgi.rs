//! Pixels through DXGI desktop duplication, where Windows provides it; GDI (`capture.rs`)
//! where it does not.
//!
//! A GDI `BitBlt` of the screen makes the compositor copy the desktop back into system memory
//! on every call; desktop duplication hands over the frame the compositor already has, so
//! capture costs a GPU copy and one map. Each output of each adapter is duplicated on a D3D11
//! device of that adapter; its latest frame is copied into a staging texture that stays mapped
//! for reading only while a capture reads it, and that texture *is* the last frame: when the
//! screen has not changed (`DXGI_ERROR_WAIT_TIMEOUT`) it is read again.
//!
//! Whether duplication is used is decided once per process, at the first capture, and logged
//! at info level with the `HRESULT` that ruled it out. Wine 8 answers `DuplicateOutput` with
//! `E_NOTIMPL` (0x80004001), so under Wine every capture is GDI's. Losing access (a mode
//! change, the secure desktop, a full-screen game; `DXGI_ERROR_ACCESS_LOST`) makes mcec set
//! duplication up again; a rotated output is left to GDI, which rotates for us.
//!
//! The caller blanks mcec's own windows in whatever this returns, as it does for GDI.

use std::sync::{Mutex, MutexGuard};

use mcec_desktop::types::Rect;
use windows::Win32::Foundation::{E_FAIL, HMODULE};
use windows::Win32::Graphics::Direct3D::D3D_DRIVER_TYPE_UNKNOWN;
use windows::Win32::Graphics::Direct3D11::{
    D3D11_CPU_ACCESS_READ, D3D11_CREATE_DEVICE_FLAG, D3D11_MAP_READ, D3D11_MAPPED_SUBRESOURCE,
    D3D11_SDK_VERSION, D3D11_TEXTURE2D_DESC, D3D11_USAGE_STAGING, D3D11CreateDevice, ID3D11Device,
    ID3D11DeviceContext, ID3D11Texture2D,
};
use windows::Win32::Graphics::Dxgi::Common::{
    DXGI_FORMAT_B8G8R8A8_UNORM, DXGI_MODE_ROTATION_IDENTITY, DXGI_MODE_ROTATION_UNSPECIFIED, DXGI_SAMPLE_DESC,
};
use windows::Win32::Graphics::Dxgi::{
    CreateDXGIFactory1, DXGI_ERROR_ACCESS_LOST, DXGI_ERROR_DEVICE_REMOVED, DXGI_ERROR_DEVICE_RESET,
    DXGI_ERROR_NOT_FOUND, DXGI_ERROR_UNSUPPORTED, DXGI_ERROR_WAIT_TIMEOUT, DXGI_OUTDUPL_FRAME_INFO,
    IDXGIAdapter1, IDXGIFactory1, IDXGIOutput1, IDXGIOutputDuplication, IDXGIResource,
};
use windows::core::{HRESULT, Interface};

/// How long the first frame of a fresh duplication may take to arrive.
const FIRST_FRAME_WAIT_MS: u32 = 500;
/// How long a capture waits for a frame the compositor has not presented yet: about one
/// refresh at 60 Hz, so a capture right after a click shows the click's effect, and an
/// unchanged screen costs at most this much.
const FRESH_FRAME_WAIT_MS: u32 = 20;

/// What a failed duplication call means for this capture and the next ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Next {
    /// Duplication lost its access or device: set it up again and retry.
    Recreate,
    /// Read this capture with GDI; keep duplication for the next one.
    GdiThisTime,
    /// Duplication is not usable in this process: GDI from now on.
    GdiFromNowOn,
}

/// The decision after a duplication call failed with `code`.
pub(super) fn next_after(code: HRESULT) -> Next {
    if code == DXGI_ERROR_ACCESS_LOST || code == DXGI_ERROR_DEVICE_REMOVED || code == DXGI_ERROR_DEVICE_RESET
    {
        Next::Recreate
    } else if code == DXGI_ERROR_WAIT_TIMEOUT {
        // No first frame yet: only a capture with nothing to show was missed.
        Next::GdiThisTime
    } else {
        Next::GdiFromNowOn
    }
}

/// Copies the BGRA pixels of `part` (desktop coordinates, inside both) from a mapped frame of
/// `output` whose rows are `pitch` bytes apart into `dst`, the tightly packed pixels of `area`.
pub(super) fn copy_part(src: &[u8], pitch: usize, output: Rect, dst: &mut [u8], area: Rect, part: Rect) {
    let row_bytes = part.width as usize * 4;
    let (sx, sy) = ((part.x - output.x) as usize, (part.y - output.y) as usize);
    let (dx, dy) = ((part.x - area.x) as usize, (part.y - area.y) as usize);
    let dst_stride = area.width as usize * 4;
    for row in 0..part.height as usize {
        let s = (sy + row) * pitch + sx * 4;
        let d = (dy + row) * dst_stride + dx * 4;
        dst[d..d + row_bytes].copy_from_slice(&src[s..s + row_bytes]);
    }
}

/// A failed call and which one it was.
#[derive(Debug)]
struct Failure {
    code: HRESULT,
    what: &'static str,
}

impl Failure {
    fn at(what: &'static str) -> impl FnOnce(windows::core::Error) -> Failure {
        move |e| Failure { code: e.code(), what }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#010x} at {}", self.code.0 as u32, self.what)
    }
}

/// One duplicated output and the last frame read from it.
struct Output {
    /// Where it lies on the desktop, in physical pixels.
    rect: Rect,
    device: ID3D11Device,
    context: ID3D11DeviceContext,
    dup: IDXGIOutputDuplication,
    /// The last frame, once one arrived.
    staging: Option<ID3D11Texture2D>,
}

/// Gives a frame back to the compositor however its reading ends.
struct HeldFrame<'a>(&'a IDXGIOutputDuplication);

impl Drop for HeldFrame<'_> {
    fn drop(&mut self) {
        // SAFETY: a frame was acquired on this duplication and is released once.
        let _ = unsafe { self.0.ReleaseFrame() };
    }
}

impl Output {
    /// Makes `staging` hold the newest frame: a new one when the compositor presented since
    /// the last call, the previous one when nothing changed.
    fn refresh(&mut self) -> Result<(), Failure> {
        let wait = if self.staging.is_some() { FRESH_FRAME_WAIT_MS } else { FIRST_FRAME_WAIT_MS };
        let mut info = DXGI_OUTDUPL_FRAME_INFO::default();
        let mut resource: Option<IDXGIResource> = None;
        // SAFETY: both out pointers point at live locals of the types the call writes.
        let acquired = unsafe { self.dup.AcquireNextFrame(wait, &mut info, &mut resource) };
        match acquired {
            Ok(()) => {}
            Err(e) if e.code() == DXGI_ERROR_WAIT_TIMEOUT && self.staging.is_some() => return Ok(()),
            Err(e) => return Err(Failure::at("AcquireNextFrame")(e)),
        }
        let _held = HeldFrame(&self.dup);
        if info.LastPresentTime == 0 && self.staging.is_some() {
            // Only the pointer moved: the image is the last one.
            return Ok(());
        }
        let frame: ID3D11Texture2D = resource
            .ok_or(Failure { code: E_FAIL, what: "AcquireNextFrame (no resource)" })?
            .cast()
            .map_err(Failure::at("IDXGIResource as ID3D11Texture2D"))?;
        if self.staging.is_none() {
            self.staging = Some(self.staging_like(&frame)?);
        }
        let staging = self.staging.as_ref().expect("made above");
        // SAFETY: both textures live on this device and have the same size and format.
        unsafe { self.context.CopyResource(staging, &frame) };
        Ok(())
    }

    /// A CPU-readable texture of `frame`'s size and format.
    fn staging_like(&self, frame: &ID3D11Texture2D) -> Result<ID3D11Texture2D, Failure> {
        let mut desc = D3D11_TEXTURE2D_DESC::default();
        // SAFETY: `desc` is a live out parameter of the type GetDesc writes.
        unsafe { frame.GetDesc(&mut desc) };
        if desc.Format != DXGI_FORMAT_B8G8R8A8_UNORM {
            return Err(Failure { code: DXGI_ERROR_UNSUPPORTED, what: "a desktop format other than BGRA8" });
        }
        if (desc.Width, desc.Height) != (self.rect.width, self.rect.height) {
            // The frame is read with the output's desktop rectangle: they must agree.
            return Err(Failure {
                code: DXGI_ERROR_UNSUPPORTED,
                what: "a frame of another size than its output",
            });
        }
        let staging_desc = D3D11_TEXTURE2D_DESC {
            Width: desc.Width,
            Height: desc.Height,
            MipLevels: 1,
            ArraySize: 1,
            Format: desc.Format,
            SampleDesc: DXGI_SAMPLE_DESC { Count: 1, Quality: 0 },
            Usage: D3D11_USAGE_STAGING,
            BindFlags: 0,
            CPUAccessFlags: D3D11_CPU_ACCESS_READ.0 as u32,
            MiscFlags: 0,
        };
        let mut staging = None;
        // SAFETY: the description is complete, no initial data, and the out pointer is live.
        unsafe { self.device.CreateTexture2D(&staging_desc, None, Some(&mut staging)) }
            .map_err(Failure::at("CreateTexture2D"))?;
        staging.ok_or(Failure { code: E_FAIL, what: "CreateTexture2D (no texture)" })
    }

    /// Copies `part` of the last frame into `dst`, the pixels of `area`.
    fn read(&self, dst: &mut [u8], area: Rect, part: Rect) -> Result<(), Failure> {
        let staging = self.staging.as_ref().ok_or(Failure { code: E_FAIL, what: "no frame yet" })?;
        let mut mapped = D3D11_MAPPED_SUBRESOURCE::default();
        // SAFETY: a staging texture with CPU read access, subresource 0, live out pointer.
        unsafe { self.context.Map(staging, 0, D3D11_MAP_READ, 0, Some(&mut mapped)) }
            .map_err(Failure::at("Map"))?;
        let pitch = mapped.RowPitch as usize;
        let len = pitch * (self.rect.height as usize - 1) + self.rect.width as usize * 4;
        // SAFETY: while mapped, `pData` holds the texture's rows, `RowPitch` bytes apart, and
        // the texture is the output's size; the slice ends before Unmap.
        let src = unsafe { std::slice::from_raw_parts(mapped.pData.cast::<u8>(), len) };
        copy_part(src, pitch, self.rect, dst, area, part);
        // SAFETY: mapped above; `src` is not used after this.
        unsafe { self.context.Unmap(staging, 0) };
        Ok(())
    }
}

/// Every output of the desktop, duplicated.
struct Outputs(Vec<Output>);

// SAFETY: the interfaces are only used under the `Duplicator`'s mutex, one thread at a time;
// DXGI objects and D3D11 devices are free-threaded, and the immediate context is never used
// by two threads at once because of that mutex.
unsafe impl Send for Outputs {}

impl Outputs {
    /// Duplicates every output attached to the desktop, on a D3D11 device of its adapter.
    fn set_up() -> Result<Outputs, Failure> {
        // SAFETY: plain factory creation.
        let factory: IDXGIFactory1 =
            unsafe { CreateDXGIFactory1() }.map_err(Failure::at("CreateDXGIFactory1"))?;
        let mut outputs = Vec::new();
        for a in 0.. {
            // SAFETY: enumeration by index; DXGI_ERROR_NOT_FOUND ends it.
            let adapter: IDXGIAdapter1 = match unsafe { factory.EnumAdapters1(a) } {
                Ok(adapter) => adapter,
                Err(e) if e.code() == DXGI_ERROR_NOT_FOUND => break,
                Err(e) => return Err(Failure::at("EnumAdapters1")(e)),
            };
            let mut device_of_adapter: Option<(ID3D11Device, ID3D11DeviceContext)> = None;
            for o in 0.. {
                // SAFETY: enumeration by index; DXGI_ERROR_NOT_FOUND ends it.
                let output = match unsafe { adapter.EnumOutputs(o) } {
                    Ok(output) => output,
                    Err(e) if e.code() == DXGI_ERROR_NOT_FOUND => break,
                    Err(e) => return Err(Failure::at("EnumOutputs")(e)),
                };
                // SAFETY: plain query.
                let desc = unsafe { output.GetDesc() }.map_err(Failure::at("IDXGIOutput::GetDesc"))?;
                if !desc.AttachedToDesktop.as_bool() {
                    continue;
                }
                let (device, context) = match &device_of_adapter {
                    Some(pair) => pair.clone(),
                    None => device_on(&adapter)?,
                };
                device_of_adapter = Some((device.clone(), context.clone()));
                let output1: IDXGIOutput1 =
                    output.cast().map_err(Failure::at("IDXGIOutput as IDXGIOutput1"))?;
                // SAFETY: the device was created on this output's adapter.
                let dup =
                    unsafe { output1.DuplicateOutput(&device) }.map_err(Failure::at("DuplicateOutput"))?;
                // SAFETY: plain query.
                let rotation = unsafe { dup.GetDesc() }.Rotation;
                if rotation != DXGI_MODE_ROTATION_IDENTITY && rotation != DXGI_MODE_ROTATION_UNSPECIFIED {
                    return Err(Failure { code: DXGI_ERROR_UNSUPPORTED, what: "a rotated output" });
                }
                let r = desc.DesktopCoordinates;
                let rect = Rect {
                    x: r.left,
                    y: r.top,
                    width: (r.right - r.left) as u32,
                    height: (r.bottom - r.top) as u32,
                };
                outputs.push(Output { rect, device, context, dup, staging: None });
            }
        }
        if outputs.is_empty() {
            return Err(Failure { code: DXGI_ERROR_NOT_FOUND, what: "no output attached to the desktop" });
        }
        Ok(Outputs(outputs))
    }

    /// The BGRA pixels of `area`; what no output covers stays black, as in a GDI blit.
    fn read(&mut self, area: Rect) -> Result<Vec<u8>, Failure> {
        let mut bgra = vec![0u8; area.width as usize * area.height as usize * 4];
        for output in &mut self.0 {
            let Some(part) = area.intersect(&output.rect) else { continue };
            output.refresh()?;
            output.read(&mut bgra, area, part)?;
        }
        Ok(bgra)
    }
}

/// A D3D11 device (and its immediate context) on `adapter`.
fn device_on(adapter: &IDXGIAdapter1) -> Result<(ID3D11Device, ID3D11DeviceContext), Failure> {
    let (mut device, mut context) = (None, None);
    // SAFETY: an explicit adapter goes with D3D_DRIVER_TYPE_UNKNOWN; both out pointers are live.
    unsafe {
        D3D11CreateDevice(
            adapter,
            D3D_DRIVER_TYPE_UNKNOWN,
            HMODULE::default(),
            D3D11_CREATE_DEVICE_FLAG(0),
            None,
            D3D11_SDK_VERSION,
            Some(&mut device),
            None,
            Some(&mut context),
        )
    }
    .map_err(Failure::at("D3D11CreateDevice"))?;
    match (device, context) {
        (Some(d), Some(c)) => Ok((d, c)),
        _ => Err(Failure { code: E_FAIL, what: "D3D11CreateDevice (no device)" }),
    }
}

enum State {
    /// Not tried yet in this process, or to be set up again after losing access.
    Untried,
    Ready(Outputs),
    /// GDI for the rest of the process.
    Unavailable,
}

/// The process's desktop duplication, set up at the first capture.
pub(super) struct Duplicator {
    state: Mutex<State>,
}

impl Duplicator {
    pub(super) fn new() -> Duplicator {
        Duplicator { state: Mutex::new(State::Untried) }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The BGRA pixels of `area`, rows top to bottom, or `None` when this capture is GDI's.
    pub(super) fn read(&self, area: Rect) -> Option<Vec<u8>> {
        let mut state = self.state();
        // A second pass only after losing access: set up again once, then give up for now.
        for _ in 0..2 {
            if matches!(*state, State::Untried) {
                *state = match Outputs::set_up() {
                    Ok(outputs) => {
                        tracing::info!("capture: DXGI desktop duplication of {} output(s)", outputs.0.len());
                        State::Ready(outputs)
                    }
                    Err(f) => {
                        tracing::info!("capture: DXGI desktop duplication unavailable ({f}), using GDI");
                        State::Unavailable
                    }
                };
            }
            let State::Ready(outputs) = &mut *state else { return None };
            let failure = match outputs.read(area) {
                Ok(bgra) => return Some(bgra),
                Err(f) => f,
            };
            match next_after(failure.code) {
                Next::Recreate => {
                    tracing::info!("capture: DXGI desktop duplication lost ({failure}), setting it up again");
                    *state = State::Untried;
                }
                Next::GdiThisTime => {
                    tracing::debug!("capture: no DXGI frame ({failure}), GDI this time");
                    return None;
                }
                Next::GdiFromNowOn => {
                    tracing::info!(
                        "capture: DXGI desktop duplication failed ({failure}), using GDI from now on"
                    );
                    *state = State::Unavailable;
                    return None;
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use windows::Win32::Foundation::{E_ACCESSDENIED, E_NOTIMPL};

    use super::*;

    fn rect(x: i32, y: i32, width: u32, height: u32) -> Rect {
        Rect { x, y, width, height }
    }

    #[test]
    fn lost_access_sets_up_again_a_timeout_reads_gdi_once_anything_else_for_good() {
        assert_eq!(next_after(DXGI_ERROR_ACCESS_LOST), Next::Recreate);
        assert_eq!(next_after(DXGI_ERROR_DEVICE_REMOVED), Next::Recreate);
        assert_eq!(next_after(DXGI_ERROR_DEVICE_RESET), Next::Recreate);
        assert_eq!(next_after(DXGI_ERROR_WAIT_TIMEOUT), Next::GdiThisTime);
        assert_eq!(next_after(E_NOTIMPL), Next::GdiFromNowOn);
        assert_eq!(next_after(E_ACCESSDENIED), Next::GdiFromNowOn);
        assert_eq!(next_after(DXGI_ERROR_UNSUPPORTED), Next::GdiFromNowOn);
    }

    #[test]
    fn a_part_is_copied_from_a_pitched_frame_to_its_place_in_the_area() {
        // A 4x3 output at (100, 50) whose rows are padded to 5 pixels; each pixel is
        // [x, y, 0xAA, 0xFF] in output coordinates and the padding is 0xEE.
        let output = rect(100, 50, 4, 3);
        let pitch = 5 * 4;
        let mut src = vec![0xEEu8; pitch * 3];
        for y in 0..3 {
            for x in 0..4 {
                src[y * pitch + x * 4..][..4].copy_from_slice(&[x as u8, y as u8, 0xAA, 0xFF]);
            }
        }
        // The area starts left of and above the output; the part is the output's lower right 2x2.
        let area = rect(99, 49, 5, 4);
        let part = rect(102, 51, 2, 2);
        let mut dst = vec![0u8; 5 * 4 * 4];
        copy_part(&src, pitch, output, &mut dst, area, part);
        let px = |x: usize, y: usize| &dst[(y * 5 + x) * 4..][..4];
        assert_eq!(px(3, 2), [2, 1, 0xAA, 0xFF]);
        assert_eq!(px(4, 2), [3, 1, 0xAA, 0xFF]);
        assert_eq!(px(3, 3), [2, 2, 0xAA, 0xFF]);
        assert_eq!(px(4, 3), [3, 2, 0xAA, 0xFF]);
        let untouched =
            (0..5).flat_map(|x| (0..4).map(move |y| (x, y))).filter(|&(x, y)| !(x >= 3 && y >= 2));
        for (x, y) in untouched {
            assert_eq!(px(x, y), [0, 0, 0, 0], "pixel {x},{y} lies outside the part");
        }
        assert!(!dst.contains(&0xEE), "no row padding reaches the image");
    }

    #[test]
    fn two_outputs_side_by_side_fill_one_area() {
        let (left, right) = (rect(0, 0, 2, 1), rect(2, 0, 2, 1));
        let red = [0u8, 0, 0xFF, 0xFF].repeat(2);
        let blue = [0xFFu8, 0, 0, 0xFF].repeat(2);
        let area = rect(1, 0, 2, 1);
        let mut dst = vec![0u8; 2 * 4];
        copy_part(&red, 8, left, &mut dst, area, area.intersect(&left).unwrap());
        copy_part(&blue, 8, right, &mut dst, area, area.intersect(&right).unwrap());
        assert_eq!(dst, [0, 0, 0xFF, 0xFF, 0xFF, 0, 0, 0xFF]);
    }
}
