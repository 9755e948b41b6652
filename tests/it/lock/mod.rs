//! The lock itself: acquire, release, extend and status (`engine`), locks held on only some
//! servers (`partial`), refusals that write nothing (`refusals`), the guards of every run
//! (`guards`), fencing numbers (`fence`) and `--hold-at-least` (`kept`).

mod engine;
mod fence;
mod guards;
mod kept;
mod partial;
mod refusals;
