//! The operator's prompts on sway: a chord bound on the physical keyboards while a prompt is
//! shown is what presses its control.
//!
//! A Wayland client is never told which device produced an event, so the prompts (X11
//! windows on the session's XWayland) cannot name the click that pressed their buttons
//! the way they do on X11. sway can: a binding restricted to a keyboard fires only for keys
//! of that keyboard. So while the core says a prompt is shown
//! (`mcec_desktop::monitor::ChordControls`: re-arm, allow, the opt-in's confirmation, End, the
//! token reveal), the binder here keeps that prompt's chord bound
//! on every physical keyboard with a `nop` carrying a fresh nonce; the event thread
//! (`monitor.rs`) hands the `binding` event with that nonce to the controls as a physical
//! press, which the core judges with the same rules as a click on X11. The same chord is
//! bound on the virtual keyboard too, with a nonce of its own, so an injected press is
//! reported, judged injected, refused and audited rather than passed to the focused window.
//!
//! Each nonce serves one press: sway sends every fired binding's command to every IPC
//! subscriber, so after a press the binding is made again with a new one, and one prompt
//! shown again gets a new one too. sway does not list bindings added at run time, so a
//! program of the same user cannot learn a nonce no press has revealed. When the prompt closes
//! the bindings go. They are checked like the stop's (`guard.rs`): one removed while its
//! prompt is shown is tampering, which stops, and a press refuses while tampering is recent.
//!
//! With several mcec on the display only the guard shows the prompts, so only its binder
//! binds; it announces commitments to its markers (`ChordControls::announce`), which the guard
//! tells its members before sway can fire them (`mcec_desktop::monitor` `vouched.rs`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use mcec_desktop::monitor::{CONTROLS, ChordControls, Control, MonitorSink, Vouch, Vouches};
use mcec_rules::activation::Provenance;

use super::guard::{Guard, VIRTUAL_KEYBOARD};
use super::{CHECK_EVERY, nonce};
use crate::chord::Binding;

/// One control's bindings for one generation of its prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mark {
    generation: u64,
    shown_at: Instant,
    /// On the physical keyboards.
    physical: Binding,
    /// On the virtual keyboard: presses that are reported as injected.
    injected: Binding,
}

/// The prompts' bindings now, shared with the event thread that matches fired bindings.
#[derive(Debug, Default)]
pub(crate) struct Marks(Mutex<[Option<Mark>; CONTROLS]>);

impl Marks {
    /// The control, its prompt's generation and the press's provenance, when `command` (a
    /// fired binding's) is one of the prompts' bindings.
    pub(crate) fn find(&self, command: &str) -> Option<(Control, u64, Provenance)> {
        let marks = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        Control::ALL.into_iter().zip(marks.iter()).find_map(|(control, mark)| {
            let mark = mark.as_ref()?;
            if mark.physical.is_ours(command) {
                Some((control, mark.generation, Provenance::Physical))
            } else if mark.injected.is_ours(command) {
                Some((control, mark.generation, Provenance::Injected))
            } else {
                None
            }
        })
    }

    fn get(&self) -> [Option<Mark>; CONTROLS] {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn set(&self, marks: [Option<Mark>; CONTROLS]) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = marks;
    }
}

/// Keeps the shown prompts' chords bound, on a sway connection of its own.
pub(crate) struct Binder {
    pub guard: Guard,
    pub sink: MonitorSink,
    pub marks: Arc<Marks>,
    pub stopping: Arc<AtomicBool>,
}

impl Binder {
    /// Follows the prompts until the monitor stops, then removes every binding of theirs.
    pub(crate) fn serve(mut self) {
        let controls = self.sink.controls.clone();
        let mut seen = 0;
        while !self.stopping.load(Ordering::SeqCst) {
            let changes = controls.wait_change(seen, CHECK_EVERY);
            if self.stopping.load(Ordering::SeqCst) {
                break;
            }
            let outcome = if changes == seen { self.check() } else { self.follow(&controls) };
            seen = changes;
            if let Err(why) = outcome {
                if self.guard.connected() {
                    self.sink.tampering(why);
                } else {
                    tracing::error!("sway: the prompts' chords cannot be bound any more: {why}");
                    self.marks.set(Default::default());
                    self.sink.controls.announce(Default::default());
                    return;
                }
            }
        }
        let decoys = unbind_decoys(&self.marks.get());
        self.marks.set(Default::default());
        self.sink.controls.announce(Default::default());
        let _ = self.set_bindings(Vec::new(), &decoys);
        self.guard.remove_all();
    }

    /// Binds what the prompts shown now need: the same bindings while a prompt's generation
    /// stays, fresh ones for a new generation, none for a closed prompt.
    fn follow(&mut self, controls: &ChordControls) -> Result<(), String> {
        let before = self.marks.get();
        let mut now: [Option<Mark>; CONTROLS] = Default::default();
        for (i, (control, showing)) in Control::ALL.into_iter().zip(controls.showing()).enumerate() {
            let (Some(shown_at), Some(chord)) = (showing.shown_at, controls.offered(control)) else {
                continue;
            };
            now[i] = match &before[i] {
                Some(mark) if mark.generation == showing.generation => Some(mark.clone()),
                old => {
                    if old.as_ref().is_none_or(|m| m.shown_at != shown_at) {
                        tracing::info!("sway: {chord} presses {control} while its prompt is shown");
                    }
                    let fresh = || nonce().map(|n| Binding::prompt(control.name(), &chord, &n));
                    let (physical, injected) =
                        (fresh().map_err(|e| e.to_string())?, fresh().map_err(|e| e.to_string())?);
                    Some(Mark { generation: showing.generation, shown_at, physical, injected })
                }
            };
        }
        // The event thread knows the new marks before sway can fire them; presses of the old
        // ones are of a past generation, which the controls refuse.
        self.marks.set(now.clone());
        if now != before {
            self.sink.controls.announce(vouches_of(&now));
        }
        let physical: Vec<Binding> = now.iter().flatten().map(|m| m.physical.clone()).collect();
        let gone: Vec<Option<Mark>> =
            before.iter().zip(&now).map(|(b, n)| b.clone().filter(|b| Some(b) != n.as_ref())).collect();
        self.set_bindings(physical, &unbind_decoys(&gone))?;
        if !self.guard.bindings().is_empty() {
            self.guard.sync_devices()?;
        }
        self.bind_decoys()
    }

    /// The periodic check while a prompt is shown: new keyboards bound, none removed.
    fn check(&mut self) -> Result<(), String> {
        if self.guard.bindings().is_empty() {
            return Ok(());
        }
        self.guard.sync_devices()?;
        self.guard.check()?;
        // The virtual keyboard's only report presses: added again (to a binding mode entered
        // since, too), never checked.
        self.bind_decoys()
    }

    fn set_bindings(&mut self, physical: Vec<Binding>, unbind_decoys: &[String]) -> Result<(), String> {
        if !unbind_decoys.is_empty() {
            self.guard.run(&unbind_decoys.join("; "))?;
        }
        self.guard.set_bindings(physical)
    }

    /// Binds the virtual keyboard's chords (again: sway replaces a binding with itself).
    fn bind_decoys(&mut self) -> Result<(), String> {
        let decoys: Vec<String> =
            self.marks.get().iter().flatten().map(|m| m.injected.bind(VIRTUAL_KEYBOARD)).collect();
        if !decoys.is_empty() {
            self.guard.run(&decoys.join("; "))?;
        }
        Ok(())
    }
}

/// The commitments to `marks`' markers, for the guard's members.
fn vouches_of(marks: &[Option<Mark>; CONTROLS]) -> Vouches {
    marks.each_ref().map(|m| {
        m.as_ref().map(|m| Vouch { physical: m.physical.commitment(), injected: m.injected.commitment() })
    })
}

/// The commands that remove `marks`' virtual-keyboard bindings.
fn unbind_decoys(marks: &[Option<Mark>]) -> Vec<String> {
    marks.iter().flatten().map(|m| m.injected.unbind(VIRTUAL_KEYBOARD)).collect()
}
