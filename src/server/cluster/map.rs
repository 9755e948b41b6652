//! The slot map: which master serves each hash slot, read from one node's `CLUSTER SLOTS`
//! reply and corrected slot by slot after a `MOVED`.

use super::node::Node;
use super::slots::SLOTS;
use redis::Value;

/// Which master serves each slot, as one node described the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Map {
    /// For each slot, its master's index in `masters`; `NONE` when no master serves it.
    owners: Vec<u16>,
    masters: Vec<Node>,
}

const NONE: u16 = u16::MAX;

impl Map {
    /// Reads a `CLUSTER SLOTS` reply given by `asked`: `[[start, end, [host, port, id, …],
    /// replicas…], …]`. A host of `""` is `asked`'s own; `"?"` (unknown) leaves those slots
    /// unserved.
    pub(crate) fn from_slots(reply: &Value, asked: &Node) -> Result<Map, String> {
        let Value::Array(ranges) = reply else {
            return Err("answered CLUSTER SLOTS with something other than a list".into());
        };
        let mut map = Map {
            owners: vec![NONE; usize::from(SLOTS)],
            masters: Vec::new(),
        };
        for range in ranges {
            let Value::Array(fields) = range else {
                return Err("answered CLUSTER SLOTS with a malformed range".into());
            };
            let (Some(start), Some(end), Some(Value::Array(master))) = (
                integer(fields.first()),
                integer(fields.get(1)),
                fields.get(2),
            ) else {
                return Err("answered CLUSTER SLOTS with a malformed range".into());
            };
            let (Some(host), Some(port)) = (text(master.first()), integer(master.get(1))) else {
                return Err("answered CLUSTER SLOTS with a malformed master".into());
            };
            if host == "?" {
                continue;
            }
            let (Ok(start), Ok(end), Ok(port)) = (
                u16::try_from(start),
                u16::try_from(end),
                u16::try_from(port),
            ) else {
                return Err("answered CLUSTER SLOTS with a slot or port out of range".into());
            };
            if start > end || end >= SLOTS {
                return Err(format!("answered CLUSTER SLOTS with slots {start}-{end}"));
            }
            let index = map.index(Node::named(&host, port, asked));
            map.owners[usize::from(start)..=usize::from(end)].fill(index);
        }
        if map.masters.is_empty() {
            return Err(
                "has no slots assigned (not yet created with redis-cli --cluster create?)".into(),
            );
        }
        Ok(map)
    }

    fn index(&mut self, node: Node) -> u16 {
        match self.masters.iter().position(|m| *m == node) {
            Some(index) => index as u16,
            None => {
                self.masters.push(node);
                (self.masters.len() - 1) as u16
            }
        }
    }

    /// The master serving `slot`, if any.
    pub(crate) fn master(&self, slot: u16) -> Option<&Node> {
        let owner = *self.owners.get(usize::from(slot))?;
        self.masters.get(usize::from(owner))
    }

    /// Every master that serves at least one slot.
    pub(crate) fn masters(&self) -> Vec<&Node> {
        let mut serving = vec![false; self.masters.len()];
        for &owner in &self.owners {
            if let Some(flag) = serving.get_mut(usize::from(owner)) {
                *flag = true;
            }
        }
        self.masters
            .iter()
            .zip(serving)
            .filter_map(|(node, serves)| serves.then_some(node))
            .collect()
    }

    /// After a `MOVED`: `slot` is `node`'s now.
    pub(crate) fn assign(&mut self, slot: u16, node: Node) {
        let index = self.index(node);
        if let Some(owner) = self.owners.get_mut(usize::from(slot)) {
            *owner = index;
        }
    }
}

fn integer(value: Option<&Value>) -> Option<i64> {
    match value? {
        Value::Int(n) => Some(*n),
        _ => None,
    }
}

fn text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::BulkString(bytes) => String::from_utf8(bytes.clone()).ok(),
        Value::SimpleString(text) => Some(text.clone()),
        Value::VerbatimString { text, .. } => Some(text.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(start: i64, end: i64, host: &str, port: i64) -> Value {
        Value::Array(vec![
            Value::Int(start),
            Value::Int(end),
            Value::Array(vec![
                Value::BulkString(host.as_bytes().to_vec()),
                Value::Int(port),
                Value::BulkString(b"id".to_vec()),
            ]),
            Value::Array(vec![
                Value::BulkString(b"127.0.0.1".to_vec()),
                Value::Int(port + 3),
            ]),
        ])
    }

    #[test]
    fn the_slot_map_names_each_slots_master() {
        let asked = Node {
            host: "10.0.0.9".into(),
            port: 7000,
        };
        let reply = Value::Array(vec![
            range(0, 5460, "127.0.0.1", 7000),
            range(5461, 10922, "", 7001),
            range(10923, 16000, "?", 7002),
        ]);
        let mut map = Map::from_slots(&reply, &asked).unwrap();
        assert_eq!(map.master(0).unwrap().to_string(), "127.0.0.1:7000");
        assert_eq!(map.master(5461).unwrap().to_string(), "10.0.0.9:7001");
        assert_eq!(map.master(10923), None);
        assert_eq!(map.master(16383), None);
        assert_eq!(map.masters().len(), 2);
        let moved = Node {
            host: "127.0.0.1".into(),
            port: 7005,
        };
        map.assign(16383, moved.clone());
        assert_eq!(map.master(16383), Some(&moved));
        assert_eq!(map.masters().len(), 3);
        for bad in [
            Value::Nil,
            Value::Array(vec![]),
            Value::Array(vec![range(0, 16384, "h", 1)]),
            Value::Array(vec![range(5, 4, "h", 1)]),
            Value::Array(vec![Value::Array(vec![Value::Int(0)])]),
        ] {
            assert!(Map::from_slots(&bad, &asked).is_err(), "{bad:?}");
        }
    }
}
