//! The countdown latch (`redlock latch`): opening and waiting (`countdown`), its commands and
//! refusals (`commands`, `refusals`), and servers restarted empty under it (`restarts`).

mod commands;
mod countdown;
mod refusals;
mod restarts;
