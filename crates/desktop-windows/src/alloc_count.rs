//! For the unit tests only: a global allocator that counts the allocations one watched thread
//! makes, so a test can show that the hook callback allocates nothing (an allocation takes the
//! process heap's lock, which every thread shares). The watched thread is told apart by its
//! Win32 thread id, which reading costs no allocation, unlike a lazily made thread-local.

#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use windows_sys::Win32::System::Threading::GetCurrentThreadId;

struct Counting;

static WATCHED: AtomicU32 = AtomicU32::new(0);
static COUNT: AtomicU64 = AtomicU64::new(0);

fn note() {
    // SAFETY: plain Win32 call with no arguments; it reads the thread's own block.
    if WATCHED.load(Ordering::Relaxed) == unsafe { GetCurrentThreadId() } {
        COUNT.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every call goes to the system allocator unchanged; counting touches only atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: the caller keeps GlobalAlloc::alloc's contract, which System.alloc shares.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from System.alloc or realloc above, with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: `ptr` came from System.alloc or realloc above, with this layout; the caller
        // keeps GlobalAlloc::realloc's contract for `new_size`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// How many allocations the calling thread made while `f` ran.
pub fn allocations_in(f: impl FnOnce()) -> u64 {
    // SAFETY: as in `note`.
    WATCHED.store(unsafe { GetCurrentThreadId() }, Ordering::SeqCst);
    let before = COUNT.load(Ordering::SeqCst);
    f();
    let after = COUNT.load(Ordering::SeqCst);
    WATCHED.store(0, Ordering::SeqCst);
    after - before
}
