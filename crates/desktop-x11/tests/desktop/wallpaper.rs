//! Where one of mcec's windows lies over the bare desktop, the capture shows the desktop's
//! background there, pixel for pixel: a wallpaper pixmap named in `_XROOTPMAP_ID` or
//! `ESETROOT_PMAP_ID` (as feh, hsetroot and Esetroot set it), or the root window's own
//! background (`xsetroot -solid`). mcec's window is `mcec-testwin` named with the overlay's
//! class, drawing its quadrant pattern where the operator sees it.

use std::process::Command;

use mcec_desktop::seams::Screens;
use mcec_desktop::types::{LeftOutHow, Rect, RgbImage};
use mcec_desktop_x11::X11Desktop;
use mcec_rules::own_windows::OVERLAY_CLASS;
use x11rb::connection::Connection;
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{ChangeWindowAttributesAux, ConnectionExt as _, EventMask, ImageFormat};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

use crate::common::{TestWin, Xvfb};

const W: u32 = 1280;
const H: u32 = 800;
/// Where the stand-in for mcec's banner lies: 640x44, centred at the top, as the overlay.
const BANNER: Rect = Rect::new(320, 0, 640, 44);

/// The stand-in banner, drawing the test pattern (red, green, blue, white quadrants).
fn banner(x: &Xvfb) -> TestWin {
    let geometry = ["--x", "320", "--y", "0", "--width", "640", "--height", "44"];
    TestWin::open(&x.display, &[&geometry[..], &["--class", OVERLAY_CLASS, "--title", "banner"]].concat())
}

/// The colour of row `y` of the wallpaper `mcec-wallpaper` sets.
fn stripe(y: u32) -> [u8; 3] {
    [(y * 5 % 256) as u8, 0x80, (255 - y % 256) as u8]
}

/// Set the striped wallpaper, named in the root property `prop`, as hsetroot does.
fn set_striped_wallpaper(x: &Xvfb, prop: &str) {
    let set =
        Command::new(env!("CARGO_BIN_EXE_mcec-wallpaper")).arg(prop).env("DISPLAY", &x.display).status();
    assert!(set.unwrap().success(), "mcec-wallpaper {prop}");
}

/// What the operator sees at (x, y): the screen itself, read behind mcec's back.
fn on_screen(conn: &RustConnection, x: i16, y: i16) -> [u8; 3] {
    let root = conn.setup().roots[0].root;
    let image = conn.get_image(ImageFormat::Z_PIXMAP, root, x, y, 1, 1, !0).unwrap().reply().unwrap();
    [image.data[2], image.data[1], image.data[0]]
}

/// Capture the whole screen as the agent's capture does; it must say mcec's window was
/// recomposed, over `BANNER`.
fn agent_view(backend: &X11Desktop, artefact: &str) -> RgbImage {
    let shot = backend.capture(Rect::new(0, 0, W, H)).unwrap();
    let left_out = shot.left_out.expect("mcec's window is left out");
    assert_eq!(left_out.how, LeftOutHow::Recomposed);
    assert_eq!(left_out.areas, vec![BANNER]);
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-artifacts/desktop-x11");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(artefact), mcec_desktop::image::encode_png(&shot.image).unwrap()).unwrap();
    shot.image
}

/// The pixels under the banner that are not `want(x, y)`.
fn wrong_under_banner(img: &RgbImage, want: impl Fn(u32, u32) -> [u8; 3]) -> usize {
    let (x0, y0) = (BANNER.x as u32, BANNER.y as u32);
    (y0..y0 + BANNER.height)
        .flat_map(|y| (x0..x0 + BANNER.width).map(move |x| (x, y)))
        .filter(|&(x, y)| img.pixel(x, y) != Some(want(x, y)))
        .count()
}

fn xsetroot(x: &Xvfb, args: &[&str]) {
    let set = Command::new("xsetroot").args(args).env("DISPLAY", &x.display).status();
    assert!(set.expect("xsetroot must be installed (x11-xserver-utils)").success());
}

#[test]
fn a_solid_root_background_shows_under_mcecs_window() {
    let x = Xvfb::start();
    xsetroot(&x, &["-solid", "#3a7d2c"]);
    let backend = x.backend();
    let _banner = banner(&x);
    let raw = x.raw();
    assert_eq!(on_screen(&raw, 330, 10), [255, 0, 0], "the operator sees the banner's pixels there");
    assert_eq!(on_screen(&raw, 100, 10), [0x3a, 0x7d, 0x2c], "and the colour beside it");

    let img = agent_view(&backend, "wallpaper-solid-agent-view.png");
    assert_eq!(wrong_under_banner(&img, |_, _| [0x3a, 0x7d, 0x2c]), 0, "the agent sees the root's colour");
    assert_eq!(img.pixel(100, 10), Some([0x3a, 0x7d, 0x2c]));
}

fn a_named_wallpaper_shows_under_mcecs_window(prop: &str, artefact: &str) {
    let x = Xvfb::start();
    set_striped_wallpaper(&x, prop);
    let raw = x.raw();
    let backend = x.backend();
    let _banner = banner(&x);
    assert_eq!(on_screen(&raw, 330, 10), [255, 0, 0], "the operator sees the banner's pixels there");
    assert_eq!(on_screen(&raw, 100, 10), stripe(10), "and the wallpaper beside it");

    let img = agent_view(&backend, artefact);
    assert_eq!(wrong_under_banner(&img, |_, y| stripe(y)), 0, "the agent sees the wallpaper");
}

#[test]
fn an_xrootpmap_wallpaper_shows_under_mcecs_window() {
    a_named_wallpaper_shows_under_mcecs_window("_XROOTPMAP_ID", "wallpaper-xrootpmap-agent-view.png");
}

#[test]
fn an_esetroot_wallpaper_shows_under_mcecs_window() {
    a_named_wallpaper_shows_under_mcecs_window("ESETROOT_PMAP_ID", "wallpaper-esetroot-agent-view.png");
}

/// A root background tiled with a pattern and named in no property (`xsetroot -mod`, a grid):
/// the agent sees it under mcec's window as the screen shows it once that window is gone, and
/// the window mcec maps to read it is gone when the capture returns.
#[test]
fn a_tiled_root_background_shows_under_mcecs_window_and_the_probe_is_gone() {
    let x = Xvfb::start();
    xsetroot(&x, &["-mod", "7", "5", "-fg", "#ff8800", "-bg", "#113355"]);
    let backend = x.backend();
    let banner = banner(&x);
    let raw = x.raw();
    let root = raw.setup().roots[0].root;
    let before = raw.query_tree(root).unwrap().reply().unwrap().children;
    let with_banner = agent_view(&backend, "wallpaper-tiled-agent-view.png");
    assert_eq!(raw.query_tree(root).unwrap().reply().unwrap().children, before, "no window is left behind");

    // Destroyed and waited for, so the capture below is taken after it is gone.
    raw.destroy_window(banner.id).unwrap().check().unwrap();
    let without = backend.capture(Rect::new(0, 0, W, H)).unwrap();
    assert_eq!(without.left_out, None, "mcec's window is gone");
    let tile = |x, y| without.image.pixel(x, y).unwrap();
    assert_ne!(wrong_under_banner(&without.image, |_, _| tile(330, 10)), 0, "a pattern, not a plain colour");
    assert_eq!(wrong_under_banner(&with_banner, tile), 0, "the agent saw the root as it is");
}

/// Where another window lies under all of mcec's window, the capture shows it and needs no
/// background: no probe window is made (nothing is created on the display). Once that window
/// is gone, the probe is made and the root's colour shows.
#[test]
fn a_window_under_mcecs_window_needs_no_background() {
    let x = Xvfb::start();
    xsetroot(&x, &["-solid", "#3a7d2c"]);
    let backend = x.backend();
    let geometry = ["--x", "0", "--y", "0", "--width", "1280", "--height", "400", "--stripes", "1"];
    let app = TestWin::open(&x.display, &geometry);
    let _banner = banner(&x);
    let raw = x.raw();
    let root = raw.setup().roots[0].root;
    let watch = ChangeWindowAttributesAux::new().event_mask(EventMask::SUBSTRUCTURE_NOTIFY);
    raw.change_window_attributes(root, &watch).unwrap().check().unwrap();
    let created = |raw: &RustConnection| {
        // The capture has returned: every event it caused is queued before this round trip's reply.
        raw.sync().unwrap();
        std::iter::from_fn(|| raw.poll_for_event().unwrap())
            .filter(|e| matches!(e, Event::CreateNotify(_)))
            .count()
    };

    let shot = backend.capture(Rect::new(0, 0, W, H)).unwrap();
    assert_eq!(shot.left_out.map(|l| l.how), Some(LeftOutHow::Recomposed));
    // The application's top half: red left, green right, the green channel striped by row.
    let stripes = |x: u32, y: u32| {
        let stripe = (y * 8 % 256) as u8;
        if x < W / 2 { [255, stripe, 0] } else { [0, 255 ^ stripe, 0] }
    };
    assert_eq!(wrong_under_banner(&shot.image, stripes), 0, "the application under mcec's window");
    assert_eq!(created(&raw), 0, "no probe window was needed");

    raw.destroy_window(app.id).unwrap().check().unwrap();
    let img = agent_view(&backend, "wallpaper-solid-after-app-agent-view.png");
    assert_eq!(wrong_under_banner(&img, |_, _| [0x3a, 0x7d, 0x2c]), 0, "the root's colour");
    assert_eq!(created(&raw), 1, "positive control: one probe window was made for it");
}

/// Under a compositing manager (xcompmgr, which holds the Manual redirect and paints the bare
/// desktop grey when no property names a wallpaper) the root's background is not what the
/// screen shows, and a ParentRelative probe is not painted: the bare part stays black, never
/// mcec's window, and `leftOut` says so. A wallpaper property is what it paints: that shows.
#[test]
fn under_a_compositing_manager_only_a_named_wallpaper_shows() {
    let x = Xvfb::start();
    xsetroot(&x, &["-solid", "#3a7d2c"]);
    let comp = Command::new("xcompmgr").env("DISPLAY", &x.display).spawn();
    let mut comp = comp.expect("xcompmgr must be installed (scripts/test installs it)");
    let raw = x.raw();
    let selection = raw.intern_atom(false, b"_NET_WM_CM_S0").unwrap().reply().unwrap().atom;
    let started = std::time::Instant::now();
    while raw.get_selection_owner(selection).unwrap().reply().unwrap().owner == x11rb::NONE {
        assert!(started.elapsed() < std::time::Duration::from_secs(15), "xcompmgr never took the screen");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let backend = x.backend();
    let _banner = banner(&x);

    let shot = backend.capture(Rect::new(0, 0, W, H)).unwrap();
    assert_eq!(shot.left_out.map(|l| l.how), Some(LeftOutHow::RecomposedOverBlack));
    assert_eq!(wrong_under_banner(&shot.image, |_, _| [0, 0, 0]), 0, "black, never mcec's window");

    set_striped_wallpaper(&x, "_XROOTPMAP_ID");
    let img = agent_view(&backend, "wallpaper-xcompmgr-agent-view.png");
    assert_eq!(wrong_under_banner(&img, |_, y| stripe(y)), 0, "the wallpaper xcompmgr paints");
    comp.kill().unwrap();
    comp.wait().unwrap();
}
