//! Lua scripts as the servers run them. Each is assembled once from its parts (the queue's
//! functions, a shared step) and cached; `redis::Script` sends `EVALSHA` and falls back to
//! `EVAL` on `NOSCRIPT`, so a restarted server (empty script cache) costs one extra round trip,
//! once.

use redis::Script;
use std::sync::OnceLock;

pub(crate) struct Lua {
    build: fn() -> String,
    cell: OnceLock<(String, Script)>,
}

impl Lua {
    /// A script whose source `build` assembles on first use.
    pub(crate) const fn new(build: fn() -> String) -> Lua {
        Lua {
            build,
            cell: OnceLock::new(),
        }
    }

    fn built(&self) -> &(String, Script) {
        self.cell.get_or_init(|| {
            let source = (self.build)();
            let script = Script::new(&source);
            crate::server::scripts::remember(script.get_hash(), &source);
            (source, script)
        })
    }

    pub(crate) fn script(&self) -> &Script {
        &self.built().1
    }

    /// A plain `EVAL` carrying the source, for a request that may be written behind one whose
    /// reply is late: an `EVALSHA` the server does not know (restarted, or never ran it) would
    /// need one more round trip that it may not get. One `EVAL` works on any server it reaches.
    pub(crate) fn eval(&self, keys: &[String]) -> redis::Cmd {
        let mut eval = redis::cmd("EVAL");
        eval.arg(&self.built().0).arg(keys.len()).arg(keys);
        eval
    }
}
