//! The options every subcommand shares, valid before or after it: where the lock lives (servers,
//! credentials, TLS) and what goes to stderr. Each option's first line is its `-h`; the
//! credentials and TLS are in `--help` only, so that `-h` fits a screen.

use super::headings::{OUTPUT, SERVERS};
use super::values::timeout;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// Where the lock lives: valid before or after the subcommand.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = SERVERS)]
pub(crate) struct ServerArgs {
    /// Redis server URL; repeat for each server
    ///
    /// Or separate them with commas. redis://[user[:password]@]host[:port][/db], rediss://… for
    /// TLS, unix:///path/redis.sock, a Sentinel group as
    /// redis+sentinel://host1,host2,host3/MASTER_NAME (a /db, ports and credentials as in
    /// redis://), or a Redis Cluster as redis+cluster://host1,host2 (its nodes as seeds; one
    /// vote). Quorum is a majority of the distinct servers. With none, redlock uses
    /// redis://127.0.0.1:6379, and whatever Redis listens there gets the locks and the run
    /// history: name the servers wherever a Redis you do not own may run.
    #[arg(
        short = 's',
        long = "server",
        value_name = "URL",
        env = "REDLOCK_SERVERS",
        value_delimiter = ',',
        global = true,
        hide_env_values = true
    )]
    pub(crate) servers: Vec<String>,

    /// Prefix of the Redis key
    ///
    /// Lock NAME is the key <PREFIX><NAME>.
    #[arg(
        long,
        value_name = "P",
        env = "REDLOCK_PREFIX",
        default_value = "redlock:",
        global = true
    )]
    pub(crate) prefix: String,

    /// Budget per server and step
    ///
    /// For connecting and answering together (at most 60s); one slow or dead server costs this,
    /// no more (a Sentinel group's first round: twice, for its sentinels, then its master).
    #[arg(long, value_name = "DUR", env = "REDLOCK_TIMEOUT", default_value = "200ms", value_parser = timeout, global = true)]
    pub(crate) timeout: Duration,

    /// ACL username for servers whose URL names none
    #[arg(
        long,
        value_name = "USER",
        env = "REDLOCK_USERNAME",
        global = true,
        hide_short_help = true
    )]
    pub(crate) username: Option<String>,

    /// Read the password for servers whose URL has none from FILE (safer than a URL in argv);
    /// REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME
    /// and REDLOCK_SENTINEL_PASSWORD from the environment
    #[arg(
        long,
        value_name = "FILE",
        env = "REDLOCK_PASSWORD_FILE",
        global = true,
        hide_short_help = true
    )]
    pub(crate) password_file: Option<PathBuf>,

    /// Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system's
    #[arg(
        long,
        value_name = "FILE",
        env = "REDLOCK_TLS_CA",
        global = true,
        hide_short_help = true
    )]
    pub(crate) tls_ca: Option<PathBuf>,

    /// Client certificate (PEM) for rediss:// servers that require one; needs --tls-key
    #[arg(
        long,
        value_name = "FILE",
        env = "REDLOCK_TLS_CERT",
        requires = "tls_key",
        global = true,
        hide_short_help = true
    )]
    pub(crate) tls_cert: Option<PathBuf>,

    /// Private key (PEM) of the --tls-cert client certificate
    #[arg(
        long,
        value_name = "FILE",
        env = "REDLOCK_TLS_KEY",
        requires = "tls_cert",
        global = true,
        hide_short_help = true
    )]
    pub(crate) tls_key: Option<PathBuf>,

    /// DANGEROUS: do not verify rediss:// servers' certificates, so anyone on the network path
    /// can pose as a server and hand out locks. For testing only; prefer --tls-ca
    #[arg(
        long,
        env = "REDLOCK_TLS_INSECURE",
        global = true,
        hide_short_help = true
    )]
    pub(crate) tls_insecure: bool,
}

/// What goes to stderr, and in which form. Results (tokens, tables) always go to stdout.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = OUTPUT)]
pub(crate) struct OutputArgs {
    /// Print each server's answer and latency
    ///
    /// Each step's outcome on every server, its latency, and the validity obtained.
    #[arg(
        short = 'v',
        long,
        env = "REDLOCK_VERBOSE",
        global = true,
        conflicts_with = "quiet"
    )]
    pub(crate) verbose: bool,

    /// Print errors only
    ///
    /// No warnings, no events, nothing for a busy lock (the exit status says it; a JSON log still
    /// gets its `busy` event). A server that cannot vote because it is set up wrong is still
    /// named, once: it will not come back by itself.
    #[arg(short = 'q', long, env = "REDLOCK_QUIET", global = true)]
    pub(crate) quiet: bool,

    /// Stderr lines as text or json
    ///
    /// text for people, json for log collectors (one object per line, each event's fields in
    /// docs/json.md).
    #[arg(
        long,
        value_name = "FORMAT",
        env = "REDLOCK_LOG_FORMAT",
        default_value = "text",
        global = true
    )]
    pub(crate) log_format: LogFormat,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogFormat {
    Text,
    Json,
}
