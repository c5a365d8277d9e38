//! Pixels through `wlr-screencopy`: one output's frame copied into a shared-memory buffer.
//!
//! The compositor says what buffer it wants (format, size, stride), mcec makes it in a memfd,
//! asks for the copy and waits for `ready` or `failed`. Only the 32-bit RGB formats wlroots
//! offers for shm are read; the frame comes back as 8-bit RGB rows.

use std::os::fd::AsFd;

use wayland_client::protocol::{wl_output::WlOutput, wl_shm};
use wayland_client::{Proxy as _, WEnum};
use wayland_protocols_wlr::screencopy::v1::client::zwlr_screencopy_frame_v1::{self, Flags};

use super::Wl;
use mcec_desktop::types::RgbImage;

/// What the compositor said about the frame being captured.
#[derive(Debug, Default)]
pub struct FrameState {
    buffer: Option<(wl_shm::Format, u32, u32, u32)>,
    buffer_done: bool,
    y_invert: bool,
    outcome: Option<Result<(), String>>,
}

impl FrameState {
    pub(super) fn on_event(&mut self, event: zwlr_screencopy_frame_v1::Event) {
        use zwlr_screencopy_frame_v1::Event;
        match event {
            Event::Buffer { format, width, height, stride } => {
                if let WEnum::Value(f) = format
                    && readable(f)
                {
                    self.buffer = Some((f, width, height, stride));
                }
            }
            Event::BufferDone => self.buffer_done = true,
            Event::Flags { flags } => {
                self.y_invert = matches!(flags, WEnum::Value(f) if f.contains(Flags::YInvert));
            }
            Event::Ready { .. } => self.outcome = Some(Ok(())),
            Event::Failed => self.outcome = Some(Err("the compositor could not copy the output".into())),
            _ => {}
        }
    }
}

fn readable(f: wl_shm::Format) -> bool {
    matches!(
        f,
        wl_shm::Format::Xrgb8888
            | wl_shm::Format::Argb8888
            | wl_shm::Format::Xbgr8888
            | wl_shm::Format::Abgr8888
    )
}

impl Wl {
    /// The whole of `output`, in the output's own pixels.
    pub fn capture_output(&mut self, output: &WlOutput) -> Result<RgbImage, String> {
        let manager = self.screencopy.clone().ok_or("the compositor offers no wlr-screencopy")?;
        self.state.frame = FrameState::default();
        let qh = self.handle();
        let frame = manager.capture_output(0, output, &qh, ());
        let v3 = frame.version() >= 3;
        let waited = self.dispatch_until(|s| {
            s.frame.outcome.is_some() || (s.frame.buffer.is_some() && (!v3 || s.frame.buffer_done))
        });
        let result = waited.and_then(|()| self.copy_frame(&frame));
        frame.destroy();
        let _ = self.roundtrip();
        result
    }

    fn copy_frame(
        &mut self,
        frame: &zwlr_screencopy_frame_v1::ZwlrScreencopyFrameV1,
    ) -> Result<RgbImage, String> {
        if let Some(Err(e)) = &self.state.frame.outcome {
            return Err(e.clone());
        }
        let (format, width, height, stride) =
            self.state.frame.buffer.ok_or("the compositor offered no shared-memory format mcec reads")?;
        let len = usize::try_from(u64::from(stride) * u64::from(height)).map_err(|_| "frame too large")?;
        let fd = rustix::fs::memfd_create("mcec-capture", rustix::fs::MemfdFlags::CLOEXEC)
            .map_err(|e| format!("memfd for the capture: {e}"))?;
        let file = std::fs::File::from(fd);
        file.set_len(len as u64).map_err(|e| format!("sizing the capture buffer: {e}"))?;
        let qh = self.handle();
        let size = i32::try_from(len).map_err(|_| "frame too large")?;
        let pool = self.shm.create_pool(file.as_fd(), size, &qh, ());
        let as_i32 = |v: u32| i32::try_from(v).unwrap_or(i32::MAX);
        let buffer = pool.create_buffer(0, as_i32(width), as_i32(height), as_i32(stride), format, &qh, ());
        frame.copy(&buffer);
        let waited = self.dispatch_until(|s| s.frame.outcome.is_some());
        buffer.destroy();
        pool.destroy();
        waited?;
        if let Some(Err(e)) = self.state.frame.outcome.take() {
            return Err(e);
        }
        #[allow(unsafe_code)]
        // SAFETY: the memfd is ours alone (the compositor has finished writing: `ready` came)
        // and lives until the map is dropped at the end of this function.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| format!("mapping the capture: {e}"))?;
        Ok(to_rgb(&map, format, width, height, stride, self.state.frame.y_invert))
    }
}

/// 32-bit little-endian pixels (as wl_shm names them) to 8-bit RGB, flipped when `y_invert`.
fn to_rgb(
    data: &[u8],
    format: wl_shm::Format,
    width: u32,
    height: u32,
    stride: u32,
    y_invert: bool,
) -> RgbImage {
    let (w, h, stride) = (width as usize, height as usize, stride as usize);
    let bgr = matches!(format, wl_shm::Format::Xrgb8888 | wl_shm::Format::Argb8888);
    let mut pixels = Vec::with_capacity(w * h * 3);
    for row in 0..h {
        let src_row = if y_invert { h - 1 - row } else { row };
        let line = data.get(src_row * stride..src_row * stride + w * 4).unwrap_or(&[]);
        for px in line.chunks_exact(4) {
            if bgr {
                pixels.extend_from_slice(&[px[2], px[1], px[0]]);
            } else {
                pixels.extend_from_slice(&[px[0], px[1], px[2]]);
            }
        }
    }
    pixels.resize(w * h * 3, 0);
    RgbImage { width, height, pixels }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xrgb_rows_become_rgb_and_y_invert_flips() {
        // Two rows of one pixel, stride 8 (padding after each pixel).
        let data = [1, 2, 3, 0, 9, 9, 9, 9, 4, 5, 6, 0, 9, 9, 9, 9];
        let img = to_rgb(&data, wl_shm::Format::Xrgb8888, 1, 2, 8, false);
        assert_eq!(img.pixels, [3, 2, 1, 6, 5, 4]);
        let flipped = to_rgb(&data, wl_shm::Format::Xbgr8888, 1, 2, 8, true);
        assert_eq!(flipped.pixels, [4, 5, 6, 1, 2, 3]);
    }
}
