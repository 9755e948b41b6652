//! Semaphores (`--limit N`): holders and slots (`slots`), and the remembered limit (`limit`).

mod limit;
mod slots;
