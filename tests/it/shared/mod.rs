//! Shared locks (`--shared`): holders and writers (`holders`), contention (`crowds`), and other
//! Redlock clients on the same key (`interop`).

mod crowds;
mod holders;
mod interop;
