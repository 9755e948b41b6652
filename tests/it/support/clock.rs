//! A process whose wall clock is an hour ahead of the machine's (a host whose clock is off),
//! without touching the machine's clock or redlock: `clock_ahead.c`, built once into a small
//! library with the C compiler the build already needs (`cc`), for LD_PRELOAD.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

/// How far ahead the clock of a process started with `clock_ahead` runs.
pub const AHEAD: Duration = Duration::from_secs(3600);

/// The library to name in LD_PRELOAD, built on first use; `None` for a static (musl) build,
/// whose clock no preloaded library can reach.
pub fn clock_ahead() -> Option<&'static Path> {
    if cfg!(target_env = "musl") {
        return None;
    }
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/support/clock_ahead.c");
        let library = Path::new(env!("CARGO_TARGET_TMPDIR")).join("clock_ahead.so");
        let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        let built = std::process::Command::new(&compiler)
            .args(["-shared", "-fPIC", "-O2", "-o"])
            .arg(&library)
            .arg(&source)
            .status()
            .unwrap_or_else(|e| panic!("cannot run the C compiler {compiler:?} ({e})"));
        assert!(
            built.success(),
            "{compiler} could not build {}",
            source.display()
        );
        library
    });
    Some(built)
}
