//! The guardian's side: its whole life in the forked child, as raw async-signal-safe system
//! calls only (in the static build the heap is not even mapped there: heap.rs). It waits on its
//! end of the socket and a boot-time timer, and acts as guardian.rs says it must.

use super::{DEADLINE, DONE, RUNNING, STOPPING};

/// How often a guardian that is stopping the command looks whether its group is empty yet.
const STEP_NS: u64 = 20_000_000;

/// The guardian's whole life, in the forked child.
///
/// # Safety
/// Only in the child of a fork, with `channel` its end of the socket pair and `everything` a
/// full signal set, both made before the fork.
pub(super) unsafe fn guard(channel: libc::c_int, everything: &libc::sigset_t, grace_ns: u64) -> ! {
    // SAFETY: the whole body makes raw system calls on our own values and descriptors only.
    unsafe {
        // Every signal blocked: those forwarded to the command's group (while we lead it) and
        // a terminal's Ctrl-Z must not stop or kill the guardian. The anchor must stay a zombie
        // until we reap it, which an ignored SIGCHLD would prevent.
        libc::sigprocmask(libc::SIG_SETMASK, everything, std::ptr::null_mut());
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
        // Our end of the socket as descriptor 0, and none of our parent's: a server connection,
        // a pipe someone reads to its end, or the parent's end of this very socket (whose
        // end-of-file is how we learn of its death) must not stay open for as long as we live.
        // (Linux 5.9 and later close them in one call.) A socket we cannot move, we go without:
        // the parent's first message then fails, and no command starts.
        if channel != 0 && libc::dup2(channel, 0) != 0 {
            libc::_exit(1);
        }
        if libc::syscall(libc::SYS_close_range, 1, libc::c_uint::MAX, 0) != 0 {
            for fd in 1..1024 {
                libc::close(fd);
            }
        }
        // Both sides set the group, so that it exists whichever runs first.
        libc::setpgid(0, 0);
        let group = libc::getpid();
        let mut guardian = Watch {
            group,
            anchor: anchor(),
            left: false,
            grace_ns,
            deadline: None,
            our_kill: None,
            their_kill: None,
            parent_gone: false,
        };
        let timer = libc::timerfd_create(libc::CLOCK_BOOTTIME, libc::TFD_CLOEXEC);
        loop {
            guardian.wait(timer);
            guardian.read_messages();
            guardian.act(boot_ns());
        }
    }
}

/// What the guardian knows and has done.
struct Watch {
    /// The command's group: our pid.
    group: libc::pid_t,
    /// The zombie whose group we move to, or -1 if it could not be made (then we stay in the
    /// command's group, and a stop lasts its whole grace).
    anchor: libc::pid_t,
    /// Out of the command's group.
    left: bool,
    grace_ns: u64,
    /// The end of the last confirmed validity, on the boot-time clock (ns).
    deadline: Option<u64>,
    /// When the command gets SIGKILL, once we started a stop: fixed then, by the deadline we
    /// knew (a stop, once started, is not called off).
    our_kill: Option<u64>,
    /// When our parent, stopping the command itself, will SIGKILL it. Renewals may go on
    /// meanwhile (`--max-runtime` with the lock still held), so it counts only up to the
    /// deadline as it stands.
    their_kill: Option<u64>,
    /// The socket read end-of-file without a `DONE`: redlock is dead.
    parent_gone: bool,
}

impl Watch {
    /// When the command gets SIGKILL, if a stop is under way (ours or our parent's).
    fn kill_at(&self) -> Option<u64> {
        let theirs = self.their_kill.map(|kill| match self.deadline {
            Some(deadline) => kill.min(deadline),
            None => kill,
        });
        match (self.our_kill, theirs) {
            (Some(ours), Some(theirs)) => Some(ours.min(theirs)),
            (ours, theirs) => ours.or(theirs),
        }
    }

    /// When to look next: SIGKILL's time (and the group every step) during a stop, else the
    /// time to start one, `grace` before the deadline.
    fn next_wake(&self, now: u64) -> Option<u64> {
        match self.kill_at() {
            Some(kill_at) if self.left => Some(kill_at.min(now.saturating_add(STEP_NS))),
            Some(kill_at) => Some(kill_at),
            None => self
                .deadline
                .map(|deadline| deadline.saturating_sub(self.grace_ns)),
        }
    }

    /// Waits for a message or the next time to act.
    ///
    /// # Safety
    /// In the guardian, with `timer` a boot-time timerfd (or -1).
    unsafe fn wait(&self, timer: libc::c_int) {
        let wake = self.next_wake(boot_ns());
        // SAFETY: raw system calls on our own descriptors and stack values.
        unsafe {
            let mut poll_timeout = -1;
            if timer >= 0 {
                // An absolute time in the past fires at once; zero disarms the timer, so a
                // time to wake is never zero.
                let at = timespec(wake.map_or(0, |wake| wake.max(1)));
                let setting = libc::itimerspec {
                    it_interval: timespec(0),
                    it_value: at,
                };
                libc::timerfd_settime(
                    timer,
                    libc::TFD_TIMER_ABSTIME,
                    &setting,
                    std::ptr::null_mut(),
                );
            } else if let Some(wake) = wake {
                // No boot-time timer (Linux before 3.15): a poll timeout, late after a suspend.
                let ms = wake.saturating_sub(boot_ns()).div_ceil(1_000_000);
                poll_timeout = libc::c_int::try_from(ms).unwrap_or(libc::c_int::MAX);
            }
            let mut fds = [
                libc::pollfd {
                    // A negative descriptor is skipped: after end-of-file the socket would
                    // stay readable and wake us at once, forever.
                    fd: if self.parent_gone { -1 } else { 0 },
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: timer,
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            libc::poll(fds.as_mut_ptr(), 2, poll_timeout);
        }
    }

    /// Takes every message waiting, without blocking.
    fn read_messages(&mut self) {
        while !self.parent_gone {
            let mut message = [0u8; 16];
            // SAFETY: `message` has room for the 16 bytes asked for.
            let got = unsafe { libc::recv(0, message.as_mut_ptr().cast(), 16, libc::MSG_DONTWAIT) };
            match got {
                16 => {
                    let mut tag = [0u8; 8];
                    let mut at = [0u8; 8];
                    tag.copy_from_slice(&message[..8]);
                    at.copy_from_slice(&message[8..]);
                    self.take(u64::from_ne_bytes(tag), u64::from_ne_bytes(at));
                }
                // End-of-file: our parent closed its end without `DONE`, so it died.
                0 => self.parent_gone = true,
                _ => match std::io::Error::last_os_error().raw_os_error() {
                    Some(libc::EAGAIN) | Some(libc::EINTR) => return,
                    // Anything else on a socket pair only we and our parent hold: it is gone.
                    _ => self.parent_gone = true,
                },
            }
        }
    }

    fn take(&mut self, tag: u64, at: u64) {
        match tag {
            DEADLINE => self.deadline = Some(at),
            RUNNING => self.leave(),
            STOPPING => {
                self.their_kill = Some(self.their_kill.map_or(at, |earlier| earlier.min(at)));
            }
            // SAFETY: the run is over; we reap our anchor and exit.
            DONE => unsafe { self.exit() },
            _ => {}
        }
    }

    /// Starts a stop when the parent is gone or the deadline is `grace` away, SIGKILLs when a
    /// stop's time is up, and goes once the group is empty.
    fn act(&mut self, now: u64) {
        let due = self
            .deadline
            .is_some_and(|deadline| now >= deadline.saturating_sub(self.grace_ns));
        if self.kill_at().is_none() && (self.parent_gone || due) {
            self.leave();
            self.signal(libc::SIGTERM);
            // A stopped command must wake up to act on SIGTERM.
            self.signal(libc::SIGCONT);
            let by = now.saturating_add(self.grace_ns);
            self.our_kill = Some(self.deadline.map_or(by, |deadline| deadline.min(by)));
        }
        let Some(kill_at) = self.kill_at() else {
            return;
        };
        if now >= kill_at {
            self.signal(libc::SIGKILL);
            // SAFETY: nothing is left to do.
            unsafe { self.exit() }
        }
        // SAFETY: a signal-0 probe of a group id that is our own pid.
        if self.left && unsafe { libc::kill(-self.group, 0) } != 0 {
            // SAFETY: the group is empty: nothing is left to stop.
            unsafe { self.exit() }
        }
    }

    /// Moves us out of the command's group, into our anchor's.
    fn leave(&mut self) {
        if !self.left && self.anchor > 0 {
            // SAFETY: a raw system call on our own process.
            self.left = unsafe { libc::setpgid(0, self.anchor) } == 0;
        }
    }

    fn signal(&self, signal: libc::c_int) {
        // SAFETY: a raw system call; the group id is our own pid, so it is the command's group.
        unsafe {
            libc::kill(-self.group, signal);
        }
    }

    /// # Safety
    /// Ends the process.
    unsafe fn exit(&self) -> ! {
        // SAFETY: raw system calls; the anchor is our child.
        unsafe {
            if self.anchor > 0 {
                libc::waitpid(self.anchor, std::ptr::null_mut(), 0);
            }
            libc::_exit(0)
        }
    }
}

/// Makes the anchor: a child that leads a process group of its own and exits at once, left
/// unreaped so that its group (its pid) stays in being for us to join. A `CLONE_VM` and
/// `CLONE_VFORK` clone, as `posix_spawn` makes, copies no page tables; we wait (suspended) until
/// it has exited. Returns its pid, or -1.
///
/// # Safety
/// In the guardian only.
unsafe fn anchor() -> libc::pid_t {
    extern "C" fn lead_own_group(_: *mut libc::c_void) -> libc::c_int {
        // SAFETY: a raw system call; we share the guardian's memory, but touch none of it.
        unsafe {
            libc::syscall(libc::SYS_setpgid, 0, 0);
        }
        0
    }
    let mut stack = [0u8; 16 * 1024];
    // SAFETY: the child runs `lead_own_group` on `stack`, which outlives it (the guardian is
    // suspended until the child has exited), its top aligned to 16 bytes as the ABI requires.
    unsafe {
        let top = stack.as_mut_ptr().add(stack.len());
        let top = top.wrapping_sub(top as usize % 16);
        libc::clone(
            lead_own_group,
            top.cast(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            std::ptr::null_mut(),
        )
    }
}

/// Now on the boot-time clock, in ns.
fn boot_ns() -> u64 {
    let mut now = timespec(0);
    // SAFETY: clock_gettime writes the time into `now`.
    unsafe {
        libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut now);
    }
    u64::try_from(now.tv_sec)
        .unwrap_or(0)
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::try_from(now.tv_nsec).unwrap_or(0))
}

/// `ns` on the boot-time clock as a `timespec`. Its seconds are capped where a 32-bit `time_t`
/// ends (68 years after boot), so the cast holds whatever width the C library gives it.
fn timespec(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000).min(i32::MAX as u64) as _,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}
