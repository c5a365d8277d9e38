//! Each monitor's DPI on X11.
//!
//! What programs draw at is the desktop's one `Xft.dpi` resource (GTK and Qt read it; GNOME,
//! KDE and xrdb set it): X11 has no per-monitor setting, so every monitor reports the same.
//! Without it programs draw at 96. The panel's own density comes from the size in millimetres
//! RandR reports for each monitor, and is given beside it only when plausible: projectors and
//! virtual outputs report 0 or an aspect ratio instead of a size.

use x11rb::connection::Connection;
use x11rb::cookie::Cookie;
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _, GetPropertyReply};

use mcec_desktop::types::{Dpi, DpiSource};

/// DPI values outside this range are taken for a broken setting or a made-up size.
const PLAUSIBLE: std::ops::RangeInclusive<f64> = 48.0..=1200.0;
/// `RESOURCE_MANAGER` is read up to this many bytes (a desktop's resources are a few KB).
const RESOURCES_MAX_WORDS: u32 = 1 << 16;

/// Ask for the root window's resources (`RESOURCE_MANAGER`); answered by [`xft_dpi`].
pub(super) fn ask_resources<C: Connection>(conn: &C, root: u32) -> Option<Cookie<'_, C, GetPropertyReply>> {
    conn.get_property(false, root, AtomEnum::RESOURCE_MANAGER, AtomEnum::STRING, 0, RESOURCES_MAX_WORDS).ok()
}

/// `Xft.dpi` from the resources asked for with [`ask_resources`], when set and plausible.
pub(super) fn xft_dpi<C: Connection>(cookie: Option<Cookie<'_, C, GetPropertyReply>>) -> Option<u32> {
    let reply = cookie?.reply().ok()?;
    parse_xft_dpi(&String::from_utf8_lossy(&reply.value))
}

/// The value of the last `Xft.dpi` line (xrdb keeps the last one given).
fn parse_xft_dpi(resources: &str) -> Option<u32> {
    let value = resources.lines().rev().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        (name.trim() == "Xft.dpi").then(|| value.trim())
    })?;
    let dpi: f64 = value.parse().ok()?;
    PLAUSIBLE.contains(&dpi).then(|| dpi.round() as u32)
}

/// The density along the diagonal of a monitor of this size in pixels and in millimetres.
pub(super) fn physical_dpi(width_px: u32, height_px: u32, width_mm: u32, height_mm: u32) -> Option<u32> {
    if width_mm == 0 || height_mm == 0 {
        return None;
    }
    let px = f64::from(width_px).hypot(f64::from(height_px));
    let inches = f64::from(width_mm).hypot(f64::from(height_mm)) / 25.4;
    let dpi = px / inches;
    PLAUSIBLE.contains(&dpi).then(|| dpi.round() as u32)
}

/// A monitor's [`Dpi`]: `Xft.dpi` when the desktop sets it, else 96, with the panel's density.
pub(super) fn monitor_dpi(xft: Option<u32>, physical: Option<u32>) -> Dpi {
    match xft {
        Some(dpi) => Dpi::new(dpi, DpiSource::Xft, physical),
        None => Dpi { physical_dpi: physical, ..Dpi::assumed() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xft_dpi_is_read_from_the_last_line_that_sets_it() {
        assert_eq!(parse_xft_dpi("Xft.antialias:\t1\nXft.dpi:\t144\n"), Some(144));
        assert_eq!(parse_xft_dpi("Xft.dpi: 96\nXft.dpi:\t120.4\n"), Some(120));
        assert_eq!(parse_xft_dpi("Xft.dpiX:\t144\n*.dpi: 200\n"), None);
        assert_eq!(parse_xft_dpi("Xft.dpi:\t0\n"), None);
        assert_eq!(parse_xft_dpi(""), None);
    }

    #[test]
    fn physical_dpi_needs_a_plausible_size() {
        // A 24-inch 1920x1200 panel, 518x324 mm: 94 DPI.
        assert_eq!(physical_dpi(1920, 1200, 518, 324), Some(94));
        assert_eq!(physical_dpi(3840, 2160, 0, 0), None);
        // An EDID giving the aspect ratio (16x9 "mm") instead of a size.
        assert_eq!(physical_dpi(1920, 1080, 16, 9), None);
    }

    #[test]
    fn xft_wins_and_the_panel_density_is_kept_beside_it() {
        let d = monitor_dpi(Some(144), Some(94));
        assert_eq!((d.dpi, d.scale, d.dpi_source, d.physical_dpi), (144, 1.5, DpiSource::Xft, Some(94)));
        let d = monitor_dpi(None, Some(163));
        assert_eq!((d.dpi, d.scale, d.dpi_source, d.physical_dpi), (96, 1.0, DpiSource::Assumed, Some(163)));
    }
}
