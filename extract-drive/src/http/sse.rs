//! Server-sent events, assembled from a body's lines as the transport
//! hands them over ([`BodyLine`](super::transport::BodyLine)): the part of
//! the WHATWG `text/event-stream` grammar the model APIs use (`event:`,
//! `data:` over one or more lines, `:` comments, a blank line ending an
//! event; `id:` and `retry:` are read and set aside). Written here rather
//! than taken from a crate: the SSE crates read a byte stream, while the
//! lines come from the transport's retry loop, which restarts them.

/// One event: its type (`message` when the stream names none) and data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, or `message`.
    pub event: String,
    /// The `data:` lines, joined by `\n`.
    pub data: String,
}

/// The event being read.
#[derive(Debug, Default)]
pub struct SseReader {
    event: String,
    data: String,
    has_data: bool,
}

impl SseReader {
    /// Reads one line (without its `\n`; a `\r` before it is dropped); the
    /// event it ends, if it ends one.
    pub fn line(&mut self, line: &[u8]) -> Option<SseEvent> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            let event = std::mem::take(&mut self.event);
            let data = std::mem::take(&mut self.data);
            if !std::mem::take(&mut self.has_data) {
                return None;
            }
            let event = if event.is_empty() { "message".to_string() } else { event };
            return Some(SseEvent { event, data });
        }
        if line.starts_with(b":") {
            return None;
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = line.split_once(':').unwrap_or((&line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => self.event = value.to_string(),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
        None
    }

    /// Forgets the event being read: the body starts again.
    pub fn reset(&mut self) {
        *self = SseReader::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str) -> Vec<SseEvent> {
        let mut reader = SseReader::default();
        text.split('\n').filter_map(|line| reader.line(line.as_bytes())).collect()
    }

    #[test]
    fn events_end_at_blank_lines_with_their_data_joined() {
        let read = events("event: ping\ndata: {}\n\n: a comment\ndata:a\ndata: b\r\n\r\nevent: x\n\n");
        assert_eq!(
            read,
            [
                SseEvent { event: "ping".into(), data: "{}".into() },
                SseEvent { event: "message".into(), data: "a\nb".into() },
            ]
        );
    }
}
