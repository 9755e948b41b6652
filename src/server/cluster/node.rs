//! One node of a cluster as `host:port`: read as a URL names it, shown as one would write it.

/// One node of a cluster, as `host:port`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Node {
    pub(crate) host: String,
    pub(crate) port: u16,
}

impl std::fmt::Display for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

impl Node {
    /// A node as a URL names it: `host`, `host:port`, `[v6]` or `[v6]:port`.
    pub(crate) fn parse(text: &str, default_port: u16) -> Option<Node> {
        let (host, port) = match text.strip_prefix('[') {
            Some(bracketed) => {
                let (host, after) = bracketed.split_once(']')?;
                match after {
                    "" => (host, None),
                    port => (host, Some(port.strip_prefix(':')?)),
                }
            }
            None => match text.split_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (text, None),
            },
        };
        if host.is_empty() || host.contains(['/', '@', '?', '#', ',', '[', ']']) {
            return None;
        }
        let port = match port {
            Some(port) => port.parse().ok().filter(|&p| p > 0)?,
            None => default_port,
        };
        Some(Node {
            host: host.to_lowercase(),
            port,
        })
    }

    /// A node as a reply names it (a redirection, the slot map): an empty host is that of
    /// `asked`, the node that answered.
    pub(crate) fn named(host: &str, port: u16, asked: &Node) -> Node {
        Node {
            host: if host.is_empty() {
                asked.host.clone()
            } else {
                host.to_lowercase()
            },
            port,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_are_read_as_urls_write_them() {
        let node = |host: &str, port| Node {
            host: host.into(),
            port,
        };
        assert_eq!(Node::parse("H1:7000", 6379), Some(node("h1", 7000)));
        assert_eq!(Node::parse("h1", 6379), Some(node("h1", 6379)));
        assert_eq!(Node::parse("[::1]:7000", 6379), Some(node("::1", 7000)));
        assert_eq!(Node::parse("[::1]", 6379), Some(node("::1", 6379)));
        assert_eq!(node("::1", 7000).to_string(), "[::1]:7000");
        for bad in [
            "", ":7000", "h:0", "h:x", "h:99999", "[::1", "h/0", "[::1]x",
        ] {
            assert_eq!(Node::parse(bad, 6379), None, "{bad}");
        }
    }
}
