//! Text as roff, for the man pages: escaped so that man shows it as written, and a term with its
//! text indented under it.

/// A term in bold and its text indented under it.
pub(super) fn item(term: &str, text: &str) -> String {
    format!(".TP\n\\fB{}\\fR\n{}\n", escape(term), escape(text))
}

/// `text` as roff: backslashes and hyphens escaped (a `-` is a minus sign in flags, which man
/// must not hyphenate or turn into a dash), `code` in bold, and no line taken for a request.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut bold = false;
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\e"),
            '-' => out.push_str("\\-"),
            '`' => {
                out.push_str(if bold { "\\fR" } else { "\\fB" });
                bold = !bold;
            }
            _ => out.push(c),
        }
    }
    if bold {
        out.push_str("\\fR");
    }
    out.lines()
        .map(|line| {
            if line.starts_with(['.', '\'']) {
                format!("\\&{line}")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roff_text_is_escaped() {
        assert_eq!(escape("--ttl `exec`"), "\\-\\-ttl \\fBexec\\fR");
        assert_eq!(escape(".hidden"), "\\&.hidden");
        assert_eq!(escape("a\\b"), "a\\eb");
    }
}
