//! The redirections a cluster node answers with for a slot it does not serve (`MOVED`, `ASK`),
//! read into where to send the request again. Following them is `server::route`'s.

use super::node::Node;
use super::slots::SLOTS;

/// Where a node sends us for a slot it does not serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Redirect {
    /// The slot belongs to `to` now: ask it from now on.
    Moved { slot: u16, to: Node },
    /// The slot is being migrated to `to`, which has the key already: ask it this once, after
    /// `ASKING`.
    Ask { slot: u16, to: Node },
}

impl Redirect {
    /// Reads an error reply, `MOVED 3999 127.0.0.1:6381` or `ASK 3999 127.0.0.1:6381`, from
    /// its code and details. `asked` is the node that answered: a redirection without a host
    /// (`MOVED 3999 :6381`) means that node's host.
    pub(crate) fn parse(code: &str, details: Option<&str>, asked: &Node) -> Option<Redirect> {
        let mut words = details?.split_ascii_whitespace();
        let slot: u16 = words.next()?.parse().ok().filter(|&s| s < SLOTS)?;
        let (host, port) = words.next()?.rsplit_once(':')?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let to = Node::named(host, port.parse().ok()?, asked);
        match code {
            "MOVED" => Some(Redirect::Moved { slot, to }),
            "ASK" => Some(Redirect::Ask { slot, to }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirections_name_the_slot_and_the_node() {
        let asked = Node {
            host: "10.0.0.1".into(),
            port: 7000,
        };
        assert_eq!(
            Redirect::parse("MOVED", Some("3999 127.0.0.1:6381"), &asked),
            Some(Redirect::Moved {
                slot: 3999,
                to: Node {
                    host: "127.0.0.1".into(),
                    port: 6381
                }
            })
        );
        assert_eq!(
            Redirect::parse("ASK", Some("685 :7001"), &asked),
            Some(Redirect::Ask {
                slot: 685,
                to: Node {
                    host: "10.0.0.1".into(),
                    port: 7001
                }
            })
        );
        assert_eq!(
            Redirect::parse("MOVED", Some("1 ::1:7002"), &asked),
            Some(Redirect::Moved {
                slot: 1,
                to: Node {
                    host: "::1".into(),
                    port: 7002
                }
            })
        );
        assert_eq!(Redirect::parse("MOVED", Some("16384 h:1"), &asked), None);
        assert_eq!(Redirect::parse("NOSCRIPT", Some("1 h:1"), &asked), None);
        assert_eq!(Redirect::parse("MOVED", None, &asked), None);
    }
}
