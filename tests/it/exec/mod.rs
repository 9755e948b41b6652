//! `redlock exec` and the processes around it: what it runs (`runs`), when it stops its command
//! (`stops`), supervisors that kill or pause it (`rough_handling`), signals to a waiting redlock
//! (`signals`), the one supervising loop (`supervise`), and cron's holds and runtimes (`cron`).

mod cron;
mod rough_handling;
mod runs;
mod signals;
mod stops;
mod supervise;
