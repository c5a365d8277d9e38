//! The RECORD watch: sees every client's XTEST `FakeInput` and catches the forged form.
//!
//! Any client may call `FakeInput` with an XInput 1 device event type (`DeviceKeyPress`, ...)
//! naming a physical device; the server then delivers it through that device and XI2 reports
//! the physical device as the source. A RECORD context over all clients for XTEST minor 2
//! sees each such request. One aimed at a device that is not an XTEST device is tampering:
//! the sink trips the latch. Its key code is also remembered for a moment so the raw event it
//! causes is classified injected ([`ForgedRecent`]). It also sees every pointer move a program
//! makes (an XTEST motion, or a core `WarpPointer`, which makes no raw event at all): a program
//! that puts the pointer on a prompt's button under the operator's click must not get that
//! click counted (`mcec_rules::activation::pointer_verdict`).
//!
//! `FakeInput` layout (xtest.xml, checked against x11rb's serializer): byte 0 major opcode,
//! 1 minor (2), 2-3 length (9 words), 4 event type, 5 detail, 8-11 time, 12-15 root,
//! 24-25 x, 26-27 y, 35 device id.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::record::{self, ConnectionExt as _};
use x11rb::rust_connection::RustConnection;

use super::devices::DeviceTable;
use mcec_desktop::monitor::{Coverage, MonitorSink};

const FAKE_INPUT_MINOR: u8 = 2;
/// The core `WarpPointer` request's opcode.
const WARP_POINTER: u8 = 41;
/// The core `MotionNotify` event type: what a `FakeInput` that moves the pointer sends.
const MOTION_NOTIFY: u8 = 6;
const FAKE_INPUT_LEN: usize = 36;
/// How long a forged key code marks matching raw events as injected.
const FORGED_WINDOW: Duration = Duration::from_millis(500);
const FORGED_CAP: usize = 64;

/// One `FakeInput` request as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FakeInput {
    pub event_type: u8,
    pub detail: u8,
    pub device: u8,
}

impl FakeInput {
    /// Core event types (KeyPress..MotionNotify) always go through the XTEST device.
    pub fn is_core(&self) -> bool {
        (2..=6).contains(&(self.event_type & 0x7f))
    }
}

/// Splits recorded client data into requests and returns the `FakeInput`s among them.
pub fn parse_fake_inputs(data: &[u8], xtest_major: u8, swapped: bool) -> Vec<FakeInput> {
    let mut out = Vec::new();
    let mut rest = data;
    while rest.len() >= 4 {
        let raw = [rest[2], rest[3]];
        let mut words = usize::from(if swapped { u16::from_be_bytes(raw) } else { u16::from_le_bytes(raw) });
        if words == 0 && rest.len() >= 8 {
            // BIG-REQUESTS: the real length follows the header.
            let raw = [rest[4], rest[5], rest[6], rest[7]];
            let big = if swapped { u32::from_be_bytes(raw) } else { u32::from_le_bytes(raw) };
            words = usize::try_from(big).unwrap_or(0);
        }
        let len = words.saturating_mul(4);
        if len < 4 || len > rest.len() {
            break;
        }
        let req = &rest[..len];
        if req[0] == xtest_major && req[1] == FAKE_INPUT_MINOR && len >= FAKE_INPUT_LEN {
            out.push(FakeInput { event_type: req[4], detail: req[5], device: req[35] });
        } else if req[0] == WARP_POINTER {
            // A warp moves the pointer as an XTEST motion does.
            out.push(FakeInput { event_type: MOTION_NOTIFY, detail: 0, device: 0 });
        }
        rest = &rest[len..];
    }
    out
}

/// Names an XInput 1 event type relative to the extension's first event.
pub fn xi1_event_name(event_type: u8, xi_first_event: u8) -> String {
    let name = match (event_type & 0x7f).checked_sub(xi_first_event) {
        Some(0) => "DeviceValuator",
        Some(1) => "DeviceKeyPress",
        Some(2) => "DeviceKeyRelease",
        Some(3) => "DeviceButtonPress",
        Some(4) => "DeviceButtonRelease",
        Some(5) => "DeviceMotionNotify",
        _ => return format!("extension event type {event_type}"),
    };
    name.to_owned()
}

/// Key codes / buttons of recent forged requests, shared with the monitor thread.
#[derive(Debug, Clone, Default)]
pub struct ForgedRecent(Arc<Mutex<VecDeque<(u8, Instant)>>>);

impl ForgedRecent {
    pub fn push(&self, detail: u8, at: Instant) {
        let mut q = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if q.len() == FORGED_CAP {
            q.pop_front();
        }
        q.push_back((detail, at));
    }

    /// True when a forged request with this detail was seen within the window.
    pub fn matches(&self, detail: u32, now: Instant) -> bool {
        let q = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        q.iter().any(|(d, at)| u32::from(*d) == detail && now.saturating_duration_since(*at) < FORGED_WINDOW)
    }
}

/// A running RECORD watch.
pub struct RecordWatch {
    control: Arc<RustConnection>,
    context: record::Context,
    thread: Option<JoinHandle<()>>,
}

impl RecordWatch {
    /// Disables the context (the data thread then sees EndOfData) and hands back the thread.
    pub fn stop(mut self) -> Option<JoinHandle<()>> {
        let _ = self.control.record_disable_context(self.context);
        let _ = self.control.flush();
        self.thread.take()
    }
}

/// Starts the watch, or says why the stop is best effort without it.
pub fn start(
    display: &str,
    sink: MonitorSink,
    forged: ForgedRecent,
    stopping: Arc<AtomicBool>,
) -> Result<RecordWatch, Coverage> {
    let best_effort = |why: String| Coverage::BestEffort(why);
    let (control, _) =
        RustConnection::connect(Some(display)).map_err(|e| best_effort(format!("RECORD connection: {e}")))?;
    let ext = |name: &'static str| {
        control.extension_information(name).map_err(|e| best_effort(format!("querying {name}: {e}")))
    };
    if ext("RECORD")?.is_none() {
        return Err(best_effort(
            "the X server has no RECORD extension, so forged device input cannot be seen; stop is best effort"
                .into(),
        ));
    }
    let Some(xtest) = ext("XTEST")? else {
        // RECORD without XTEST: no client can synthesize input, so there is nothing to forge.
        return Err(Coverage::Full);
    };
    let xi_first_event = ext("XInputExtension")?.map_or(0, |x| x.first_event);
    let setup_err =
        |e: &dyn std::fmt::Display| best_effort(format!("RECORD setup failed: {e}; stop is best effort"));
    control.record_query_version(1, 13).map_err(|e| setup_err(&e))?.reply().map_err(|e| setup_err(&e))?;
    let context = control.generate_id().map_err(|e| setup_err(&e))?;
    let range = record::Range {
        core_requests: record::Range8 { first: WARP_POINTER, last: WARP_POINTER },
        core_replies: record::Range8 { first: 0, last: 0 },
        ext_requests: record::ExtRange {
            major: record::Range8 { first: xtest.major_opcode, last: xtest.major_opcode },
            minor: record::Range16 { first: u16::from(FAKE_INPUT_MINOR), last: u16::from(FAKE_INPUT_MINOR) },
        },
        ext_replies: record::ExtRange {
            major: record::Range8 { first: 0, last: 0 },
            minor: record::Range16 { first: 0, last: 0 },
        },
        delivered_events: record::Range8 { first: 0, last: 0 },
        device_events: record::Range8 { first: 0, last: 0 },
        errors: record::Range8 { first: 0, last: 0 },
        client_started: false,
        client_died: false,
    };
    control
        .record_create_context(context, 0, &[record::CS::ALL_CLIENTS.into()], &[range])
        .map_err(|e| setup_err(&e))?
        .check()
        .map_err(|e| setup_err(&e))?;
    let control = Arc::new(control);
    let (data, _) = RustConnection::connect(Some(display)).map_err(|e| setup_err(&e))?;
    let (ready_tx, ready_rx) = mpsc::channel::<()>();
    let ctl = Arc::clone(&control);
    let xtest_major = xtest.major_opcode;
    let thread = std::thread::Builder::new()
        .name("mcec-record".into())
        .spawn(move || {
            let watcher = Watcher { control: ctl, sink, forged, xtest_major, xi_first_event };
            watcher.run(&data, context, ready_tx, &stopping);
        })
        .map_err(|e| setup_err(&e))?;
    let watch = RecordWatch { control, context, thread: Some(thread) };
    match ready_rx.recv_timeout(Duration::from_secs(3)) {
        Ok(()) => Ok(watch),
        Err(_) => {
            let _ = watch.stop();
            Err(best_effort("the RECORD context did not start; stop is best effort".into()))
        }
    }
}

struct Watcher {
    control: Arc<RustConnection>,
    sink: MonitorSink,
    forged: ForgedRecent,
    xtest_major: u8,
    xi_first_event: u8,
}

impl Watcher {
    fn run(
        &self,
        data: &RustConnection,
        context: record::Context,
        ready: mpsc::Sender<()>,
        stopping: &AtomicBool,
    ) {
        let replies = match data.record_enable_context(context) {
            Ok(r) => r,
            Err(_) => return,
        };
        for reply in replies {
            let Ok(reply) = reply else {
                if !stopping.load(Ordering::SeqCst) {
                    self.sink.display_lost("the RECORD connection closed".into());
                }
                return;
            };
            match reply.category {
                // StartOfData
                4 => {
                    let _ = ready.send(());
                }
                // FromClient
                1 => {
                    for fake in parse_fake_inputs(&reply.data, self.xtest_major, reply.client_swapped) {
                        self.check(fake);
                    }
                }
                _ => {}
            }
        }
    }

    fn check(&self, fake: FakeInput) {
        if fake.is_core() {
            if fake.event_type & 0x7f == MOTION_NOTIFY {
                self.sink.ledger.record_pointer_moved(Instant::now());
            }
            return;
        }
        let device = u16::from(fake.device);
        // Rare path: ask the server about the device now, so a new device is never missed.
        let table = DeviceTable::xtest_atom(&*self.control)
            .and_then(|atom| DeviceTable::load(&*self.control, atom))
            .unwrap_or_default();
        let (xtest_device, name) = match table.get(device) {
            Some(d) => (d.injected, d.name.clone()),
            None => (false, "an unknown device".to_owned()),
        };
        if xtest_device {
            return;
        }
        self.forged.push(fake.detail, Instant::now());
        let what = xi1_event_name(fake.event_type, self.xi_first_event);
        self.sink.tampering(format!(
            "a client sent a forged {what} (detail {}) through device {device} ({name})",
            fake.detail
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(major: u8, event_type: u8, detail: u8, device: u8) -> Vec<u8> {
        let mut r = vec![0u8; 36];
        r[0] = major;
        r[1] = 2;
        r[2..4].copy_from_slice(&9u16.to_le_bytes());
        r[4] = event_type;
        r[5] = detail;
        r[35] = device;
        r
    }

    #[test]
    fn parses_back_to_back_requests() {
        let mut data = fake(140, 2, 39, 0);
        data.extend(fake(140, 70, 40, 9));
        let got = parse_fake_inputs(&data, 140, false);
        assert_eq!(
            got,
            vec![
                FakeInput { event_type: 2, detail: 39, device: 0 },
                FakeInput { event_type: 70, detail: 40, device: 9 }
            ]
        );
        assert!(got[0].is_core() && !got[1].is_core());
    }

    #[test]
    fn ignores_other_requests_and_truncation() {
        let mut other = fake(141, 2, 1, 1);
        other.extend(fake(140, 3, 2, 2));
        assert_eq!(parse_fake_inputs(&other, 140, false).len(), 1);
        assert!(parse_fake_inputs(&fake(140, 2, 1, 1)[..20], 140, false).is_empty());
        let mut zero = fake(140, 2, 1, 1);
        zero[2] = 0;
        zero[3] = 0;
        assert!(parse_fake_inputs(&zero, 140, false).is_empty());
    }

    #[test]
    fn matches_x11rb_serializer_offsets() {
        let req = x11rb::protocol::xtest::FakeInputRequest {
            type_: 70,
            detail: 39,
            time: 0,
            root: 0x1234,
            root_x: 5,
            root_y: 6,
            deviceid: 9,
        };
        let (bufs, _) = req.serialize(140);
        let bytes: Vec<u8> = bufs.iter().flat_map(|b| b.iter().copied()).collect();
        assert_eq!(
            parse_fake_inputs(&bytes, 140, false),
            vec![FakeInput { event_type: 70, detail: 39, device: 9 }]
        );
    }

    #[test]
    fn names_xi1_events() {
        assert_eq!(xi1_event_name(70, 69), "DeviceKeyPress");
        assert_eq!(xi1_event_name(72, 69), "DeviceButtonPress");
        assert_eq!(xi1_event_name(100, 69), "extension event type 100");
    }

    #[test]
    fn forged_codes_expire() {
        let f = ForgedRecent::default();
        let t = Instant::now();
        f.push(39, t);
        assert!(f.matches(39, t + Duration::from_millis(10)));
        assert!(!f.matches(40, t));
        assert!(!f.matches(39, t + FORGED_WINDOW + Duration::from_millis(1)));
    }
}
