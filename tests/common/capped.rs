//! Hostile-input cases run in a child process under an address-space cap (`setrlimit(RLIMIT_AS)`, what
//! `prlimit --as` sets), so that an abort or an unbounded allocation fails the case, not the machine.

/// Runs the test `name` again in a child process whose environment variable `child_var` names it; there
/// (the variable set), applies the cap of `cap` bytes and runs `case` itself, returning 0. In the parent,
/// waits for the child, fails unless it exited 0, and returns its peak resident memory in bytes.
pub fn run_capped(child_var: &str, name: &str, cap: u64, case: fn()) -> u64 {
    if std::env::var(child_var).as_deref() == Ok(name) {
        let lim = libc::rlimit { rlim_cur: cap, rlim_max: cap };
        // SAFETY: setrlimit reads the struct we pass.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &lim) }, 0, "setrlimit");
        case();
        return 0;
    }
    let exe = std::env::current_exe().unwrap();
    let child = std::process::Command::new(exe)
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(child_var, name)
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // SAFETY: waits for the child we spawned; `status` and `usage` are valid for writes.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{name}: the capped child failed (status {status:#x}; an abort or a failed assertion, see its output above)"
    );
    let peak = usage.ru_maxrss as u64 * 1024;
    eprintln!("{name}: peak resident memory {} MiB", peak >> 20);
    peak
}
