//! What the floor programs (examples/read_floor.rs, write_floor.rs, reference_floor.rs) share.

/// CPU seconds (user + system) of the whole process so far.
pub fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes one rusage into the zeroed struct.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
    t(ru.ru_utime) + t(ru.ru_stime)
}
