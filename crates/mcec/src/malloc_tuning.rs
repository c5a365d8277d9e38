//! glibc malloc settings that keep a long-lived `mcec mcp` small.
//!
//! Captures and recordings allocate buffers of a few megabytes on tokio's blocking threads.
//! glibc raises its mmap threshold each time such a buffer is freed, so later ones come from
//! per-thread arenas, which keep the pages after `free`: over a few hundred calls the process
//! grew from ~35 MB to ~70 MB resident (bench/bench_memory.py). A fixed threshold keeps every
//! large buffer in its own mapping, returned to the kernel when freed.

/// Buffers from this size up get their own mapping.
#[cfg(unix)]
const MMAP_THRESHOLD: libc::c_int = 256 * 1024;

/// Call first thing in `main`, before any thread starts.
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn fix_mmap_threshold() {
    // SAFETY: mallopt only sets an allocator parameter; called before any other thread exists.
    let ok = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD) };
    if ok != 1 {
        eprintln!("mcec: could not set the malloc mmap threshold; memory use may grow");
    }
}

/// Nothing to tune: Windows' heap is not glibc's malloc.
#[cfg(windows)]
pub fn fix_mmap_threshold() {}
