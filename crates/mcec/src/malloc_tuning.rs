//! glibc malloc settings that keep a long-lived `mcec mcp` small.
//!
//! Captures and recordings allocate buffers of a few megabytes on tokio's blocking threads.
//! glibc raises its mmap threshold each time such a buffer is freed, so later ones come from
//! per-thread arenas, which keep the pages after `free`: over a few hundred calls the process
//! grew from ~35 MB to ~70 MB resident (bench/bench_memory.py). A fixed threshold keeps every
//! large buffer in its own mapping, returned to the kernel when freed.
//!
//! One arena for all threads: glibc gives each new thread that allocates an arena of its own
//! (up to 8 per core), each keeping its freed small blocks. mcec has a dozen threads (stop
//! monitor, overlay, tokio workers and blocking threads) that allocate little and rarely at the
//! same time; with one arena `mcec mcp`'s anonymous memory after 5 rounds of
//! `bench/bench_memory.py`'s calls went from 4.5 to 3.1 MB and its peak from 24.7 to 23.5 MB.

/// Buffers from this size up get their own mapping.
#[cfg(unix)]
const MMAP_THRESHOLD: libc::c_int = 256 * 1024;

/// How many malloc arenas the threads share.
#[cfg(unix)]
const ARENA_MAX: libc::c_int = 1;

/// Call first thing in `main`, before any thread starts.
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn fix_mmap_threshold() {
    // SAFETY: mallopt only sets an allocator parameter; called before any other thread exists.
    let ok = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD) };
    if ok != 1 {
        eprintln!("mcec: could not set the malloc mmap threshold; memory use may grow");
    }
    // SAFETY: as above.
    let ok = unsafe { libc::mallopt(libc::M_ARENA_MAX, ARENA_MAX) };
    if ok != 1 {
        eprintln!("mcec: could not limit the malloc arenas; memory use may grow");
    }
}

/// Nothing to tune: Windows' heap is not glibc's malloc.
#[cfg(windows)]
pub fn fix_mmap_threshold() {}
