//! Where one reply ends in a byte stream (RESP2), so that a wire hands the redis crate's parser
//! only whole replies and keeps a partial one until the rest arrives.

/// The length of the first complete reply in `input`, or `None` while it is incomplete. A
/// malformed reply is "complete" at the end of its line, for the parser to reject.
pub(crate) fn frame_length(input: &[u8]) -> Option<usize> {
    let line_end = line_end(input)?;
    let line = input.get(1..line_end - 2).unwrap_or_default();
    match input[0] {
        b'$' => match number(line) {
            Some(length) if length >= 0 => {
                let end = line_end + length as usize + 2;
                (input.len() >= end).then_some(end)
            }
            _ => Some(line_end),
        },
        b'*' => match number(line) {
            Some(count) if count >= 0 => {
                let mut at = line_end;
                for _ in 0..count {
                    at += frame_length(&input[at..])?;
                }
                Some(at)
            }
            _ => Some(line_end),
        },
        _ => Some(line_end),
    }
}

/// Just past the first "\r\n".
fn line_end(input: &[u8]) -> Option<usize> {
    input
        .windows(2)
        .position(|pair| pair == b"\r\n")
        .map(|at| at + 2)
        .filter(|_| !input.is_empty())
}

fn number(text: &[u8]) -> Option<i64> {
    std::str::from_utf8(text).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::frame_length;

    #[test]
    fn whole_replies_are_measured_and_partial_ones_wait() {
        let replies: [&[u8]; 6] = [
            b"+OK\r\n",
            b"-ERR no\r\n",
            b":42\r\n",
            b"$-1\r\n",
            b"$5\r\nab\r\nc\r\n",
            b"*3\r\n:1\r\n$2\r\nhi\r\n*1\r\n*0\r\n",
        ];
        for reply in replies {
            let mut stream = reply.to_vec();
            stream.extend_from_slice(b"+NEXT\r\n");
            assert_eq!(frame_length(&stream), Some(reply.len()), "{reply:?}");
            for cut in 0..reply.len() {
                assert_eq!(frame_length(&reply[..cut]), None, "{reply:?} cut at {cut}");
            }
        }
    }
}
