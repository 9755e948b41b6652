//! The one way a test runs a process that runs redlock (redlock itself, or a shell that runs
//! it): in a process group of its own, with default dispositions for the termination signals and
//! an empty signal mask, stdin closed, its output captured, and waited for with a deadline. A
//! process still running at its deadline has its whole group killed and fails its test, naming
//! the command; one dropped unfinished (a test that panicked) is killed the same way. Its
//! deadline is the one `binary` derives from its flags, unless the test gives its own.

use super::binary::{deadline, redlock_command, stderr_of, stdout_of};
use super::redis_server::signal;
use super::wait_for;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, ExitStatus, Output, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// The signals a test sends to redlock, and that must therefore reach it as they would from a
/// terminal, however the test runner was started (`nohup`, `trap '' INT`, a CI agent).
const TERMINATING: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// The binary under test with no REDLOCK_* from the caller's environment.
pub fn redlock() -> Cmd {
    Cmd::new(redlock_command())
}

/// A command to run: redlock, or a shell that runs it.
pub struct Cmd {
    command: std::process::Command,
    deadline: Option<Duration>,
    /// A test gave stdout a file of its own: nothing to capture.
    stdout_given: bool,
}

impl Cmd {
    pub fn new(command: std::process::Command) -> Cmd {
        Cmd {
            command,
            deadline: None,
            stdout_given: false,
        }
    }

    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Cmd {
        self.command.arg(arg);
        self
    }

    pub fn args<I, S>(&mut self, args: I) -> &mut Cmd
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.command.args(args);
        self
    }

    pub fn env(&mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Cmd {
        self.command.env(name, value);
        self
    }

    pub fn stdout(&mut self, stdout: impl Into<Stdio>) -> &mut Cmd {
        self.command.stdout(stdout);
        self.stdout_given = true;
        self
    }

    /// How long the whole run may take, from its start, instead of what its flags allow.
    pub fn deadline(&mut self, deadline: Duration) -> &mut Cmd {
        self.deadline = Some(deadline);
        self
    }

    /// Starts it in the background.
    pub fn spawn(&mut self) -> Running {
        let what = self.describe();
        let deadline = self
            .deadline
            .unwrap_or_else(|| deadline(self.command.get_args(), self.command.get_envs()));
        let command = &mut self.command;
        command.stdin(Stdio::null()).stderr(Stdio::piped());
        if !self.stdout_given {
            command.stdout(Stdio::piped());
        }
        // Its own group: at the deadline the whole tree it started goes, and a signal the
        // terminal sends the test runner's group does not reach it.
        command.process_group(0);
        // SAFETY: the closure runs between fork and exec, in a copy of a multi-threaded process:
        // it only calls `signal`, `sigemptyset` and `sigprocmask`, which are async-signal-safe,
        // allocates nothing and touches no value but its own stack.
        unsafe {
            command.pre_exec(|| {
                // Ignored dispositions survive exec: a runner started with SIGINT ignored would
                // hand that on, and a command under `redlock exec` would never die of it.
                for signal in TERMINATING {
                    if libc::signal(signal, libc::SIG_DFL) == libc::SIG_ERR {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                let mut empty: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut empty);
                if libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut()) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
        Running::watch(child, what, deadline)
    }

    /// Starts it in the background and returns once `ready` holds. Fails the test, with its
    /// output, if it exits first or `ready` does not hold by its deadline.
    #[track_caller]
    pub fn spawn_until(&mut self, what: &str, mut ready: impl FnMut() -> bool) -> Running {
        let mut running = self.spawn();
        let mut exited = false;
        let limit = running.deadline.saturating_duration_since(Instant::now());
        wait_for(what, limit, || {
            exited = running.try_wait().is_some();
            ready() || exited
        });
        if exited && !ready() {
            let output = running.wait();
            panic!("{what}: it exited first: {output:?}");
        }
        running
    }

    /// Runs it to the end within its deadline: its status and output.
    #[track_caller]
    pub fn output(&mut self) -> std::io::Result<Output> {
        Ok(self.spawn().wait())
    }

    /// Runs it to the end, for `.code(N)`.
    #[track_caller]
    pub fn assert(&mut self) -> Assert {
        let what = self.describe();
        Assert {
            output: self.spawn().wait(),
            what,
        }
    }

    /// The command line, for messages (long arguments cut short).
    fn describe(&self) -> String {
        let program = self.command.get_program().to_string_lossy();
        let program = program.rsplit('/').next().unwrap_or_default().to_string();
        let args = self.command.get_args().map(|arg| {
            let arg = arg.to_string_lossy();
            let arg = if arg.chars().count() > 60 {
                format!("{}…", arg.chars().take(60).collect::<String>())
            } else {
                arg.into_owned()
            };
            if arg.is_empty() || arg.contains(char::is_whitespace) {
                format!("'{arg}'")
            } else {
                arg
            }
        });
        std::iter::once(program)
            .chain(args)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A finished run, for `.code(N)`.
pub struct Assert {
    output: Output,
    what: String,
}

impl Assert {
    #[track_caller]
    pub fn code(self, expected: i32) -> Output {
        assert_eq!(
            self.output.status.code(),
            Some(expected),
            "{}: {}\nstdout: {}\nstderr: {}",
            self.what,
            self.output.status,
            stdout_of(&self.output),
            stderr_of(&self.output)
        );
        self.output
    }
}

/// A process started by `Cmd::spawn`.
pub struct Running {
    pid: libc::pid_t,
    what: String,
    /// The deadline its flags give it, from its start.
    deadline: Instant,
    /// The exit status, sent by the thread that waits for it.
    exited: mpsc::Receiver<std::io::Result<ExitStatus>>,
    status: Option<ExitStatus>,
    stdout: Option<Capture>,
    stderr: Option<Capture>,
}

/// One output stream, read to its end by a thread of its own.
struct Capture {
    bytes: Arc<Mutex<Vec<u8>>>,
    done: mpsc::Receiver<()>,
}

impl Capture {
    fn start(stream: Option<impl Read + Send + 'static>) -> Option<Capture> {
        let mut stream = stream?;
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let (tx, done) = mpsc::channel();
        let sink = bytes.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match stream.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => sink.lock().unwrap().extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = tx.send(());
        });
        Some(Capture { bytes, done })
    }

    /// Waits until the stream ends, up to `until`; false if it is still open then.
    fn ended_by(&self, until: Instant) -> bool {
        self.done
            .recv_timeout(until.saturating_duration_since(Instant::now()))
            .is_ok()
    }

    fn so_far(&self) -> Vec<u8> {
        self.bytes.lock().unwrap().clone()
    }
}

impl Running {
    fn watch(mut child: Child, what: String, deadline: Duration) -> Running {
        let pid = child.id() as libc::pid_t;
        let stdout = Capture::start(child.stdout.take());
        let stderr = Capture::start(child.stderr.take());
        let (tx, exited) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait());
        });
        Running {
            pid,
            what,
            deadline: Instant::now() + deadline,
            exited,
            status: None,
            stdout,
            stderr,
        }
    }

    pub fn id(&self) -> u32 {
        self.pid as u32
    }

    /// Its exit status if it has exited, without waiting.
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            if let Ok(status) = self.exited.try_recv() {
                self.status = status.ok();
            }
        }
        self.status
    }

    /// Waits for it to exit and close its output, within the deadline its flags give it.
    #[track_caller]
    pub fn wait(self) -> Output {
        let deadline = self.deadline;
        self.finish_by(deadline)
    }

    /// Waits for it to exit and close its output, for at most `within` from now.
    #[track_caller]
    pub fn finish(self, within: Duration) -> Output {
        self.finish_by(Instant::now() + within)
    }

    /// Kills its process group and reaps it: for a process the test has no more use for.
    pub fn kill(mut self) {
        self.stop();
    }

    #[track_caller]
    fn finish_by(mut self, deadline: Instant) -> Output {
        let limit = deadline.saturating_duration_since(Instant::now());
        if self.status.is_none() {
            match self.exited.recv_timeout(limit) {
                Ok(status) => self.status = Some(status.expect("wait for the process")),
                Err(_) => self.hung(&format!("did not exit within {limit:?}")),
            }
        }
        // A process it started in another group (exec's command) may hold the output open.
        let ended = [&self.stdout, &self.stderr]
            .iter()
            .all(|capture| capture.as_ref().is_none_or(|c| c.ended_by(deadline)));
        if !ended {
            self.hung(&format!(
                "exited ({}), but something it started still held its output {limit:?} later",
                self.status.unwrap()
            ));
        }
        let bytes = |capture: &Option<Capture>| capture.as_ref().map_or(vec![], Capture::so_far);
        Output {
            status: self.status.unwrap(),
            stdout: bytes(&self.stdout),
            stderr: bytes(&self.stderr),
        }
    }

    /// Kills the group and fails the test, with what the process printed until then.
    #[track_caller]
    fn hung(&mut self, how: &str) -> ! {
        if self.status.is_some() {
            // Reaped, but what it left in its group holds the output: a group outlives its
            // leader, and its id is not handed out again while it does.
            signal(-self.pid, libc::SIGKILL);
        }
        self.stop();
        let grace = Instant::now() + Duration::from_secs(1);
        let text = |capture: &Option<Capture>| {
            capture.as_ref().map_or(String::new(), |c| {
                c.ended_by(grace);
                String::from_utf8_lossy(&c.so_far()).trim().to_string()
            })
        };
        panic!(
            "{} {how}: killed its process group\nstdout: {}\nstderr: {}",
            self.what,
            text(&self.stdout),
            text(&self.stderr)
        );
    }

    /// SIGKILL for the whole group of a process not yet reaped, then waits until it is.
    fn stop(&mut self) {
        if self.try_wait().is_none() {
            // Not reaped a moment ago, so its group (its pid) is not someone else's.
            signal(-self.pid, libc::SIGKILL);
            if let Ok(status) = self.exited.recv_timeout(Duration::from_secs(10)) {
                self.status = status.ok();
            }
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop();
    }
}
