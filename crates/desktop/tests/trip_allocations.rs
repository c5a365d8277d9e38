//! The input thread's side of the emergency stop allocates nothing, even on the key that fires
//! the chord: a Windows low-level hook runs it inside its callback, where an allocation takes
//! the process heap's lock (shared with every other thread) and can stall past
//! `LowLevelHooksTimeout`. A counting global allocator counts this thread's allocations; the
//! announcement, which is allowed to allocate, is the positive control.

#![allow(unsafe_code, reason = "a global allocator is an unsafe trait")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::Instant;

use mcec_desktop::monitor::{ClassifiedEvent, Dispatcher, Input, LastPhysicalInput, MonitorSink};
use mcec_rules::StopFlag;
use mcec_rules::chord::{Key, Side};
use mcec_rules::hotkey::{Hotkey, MainKey, Modifier};
use mcec_rules::latch::Latch;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: every call is passed to the system allocator unchanged; the count is a
// const-initialised thread-local without a destructor, so counting never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: the caller keeps GlobalAlloc::alloc's contract, which System.alloc shares.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from System.alloc or realloc above, with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: `ptr` came from System.alloc or realloc above, with this layout; the caller
        // keeps GlobalAlloc::realloc's contract for `new_size`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn allocations_in(f: impl FnOnce()) -> u64 {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

fn key(key: Key, down: bool) -> ClassifiedEvent {
    ClassifiedEvent {
        input: Input::Key { key, code: 0 },
        down,
        physical: true,
        forged: false,
        source_device: 0,
        time: 0,
        at: Instant::now(),
    }
}

#[test]
fn the_tripping_key_allocates_nothing_and_the_announcement_is_counted() {
    let latch = Latch::new(StopFlag::new());
    let mut d = Dispatcher::new(MonitorSink::new(latch.clone(), Hotkey::default(), LastPhysicalInput::new()));
    let s = MainKey::letter('s').map(Key::Main).expect("s is a main key");
    let mods = [Modifier::Ctrl, Modifier::Alt, Modifier::Shift].map(|m| Key::Modifier(m, Side::Left));
    for round in 0..3 {
        let mut fired = false;
        let during = allocations_in(|| {
            for m in mods {
                d.input(key(m, true));
            }
            fired = d.input(key(s, true));
            d.input(key(s, false));
            for m in mods {
                d.input(key(m, false));
            }
        });
        assert!(fired && latch.is_stopped(), "round {round}: the chord fired");
        assert_eq!(during, 0, "round {round}: the input thread allocated while firing the chord");
        let announcing = allocations_in(|| assert_eq!(d.announce(), 1));
        assert!(announcing > 0, "round {round}: the counter sees this thread's allocations");
    }
}
