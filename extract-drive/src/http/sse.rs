//! Server-sent events, assembled from a body's lines as the transport
//! hands them over ([`BodyLine`]): the part of
//! the WHATWG `text/event-stream` grammar the model APIs use (`event:`,
//! `data:` over one or more lines, `:` comments, a blank line ending an
//! event; `id:` and `retry:` are read and set aside). Written here rather
//! than taken from a crate: the SSE crates read a byte stream, while the
//! lines come from the transport's retry loop, which restarts them.
//!
//! [`StreamedReply`] is what every streaming backend shares: a body's lines
//! read into events for the backend's [`Assembly`] (its API's protocol),
//! the output it hands on passed to the chunk queue, a fresh assembly (and
//! a [`Chunk::Restart`] when output was shown) at every response the
//! transport reads, and a body that ends before the stream's end refused
//! as cut short, so the transport sends the request again.

use super::pace::Demand;
use super::transport::{Answer, ApiError, BodyLine, Failure, Transport};
use crate::Chunk;
use crate::queued::Queue;

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

/// A backend's protocol for one streamed reply: what each event does to
/// the reply being assembled.
pub trait Assembly: Clone + Send {
    /// What a body that ends before the stream's end is, in words.
    const CUT_SHORT: &'static str;

    /// Reads one event, handing the output it carries to `output`.
    fn event(&mut self, event: SseEvent, output: &mut Output<'_>) -> Result<(), Failure>;

    /// Whether the stream has said it ended (`message_stop`, `[DONE]`).
    fn ended(&self) -> bool;
}

/// Where an [`Assembly`] hands the output's text as it arrives.
pub struct Output<'a> {
    chunks: &'a Queue<Chunk>,
    shown: &'a mut bool,
}

impl Output<'_> {
    /// Hands on `piece`, more of the output's JSON text.
    pub fn show(&mut self, piece: &str) {
        if !piece.is_empty() {
            *self.shown = true;
            self.chunks.push(Chunk::Output(piece.to_string()));
        }
    }
}

/// One streamed reply, read from the lines of the responses the transport
/// reads (see the module's documentation).
pub struct StreamedReply<A> {
    sse: SseReader,
    assembly: A,
    /// The assembly as it starts, for a response read again.
    fresh: A,
    shown: bool,
}

impl<A: Assembly> StreamedReply<A> {
    /// A reply assembled by `assembly` (as it is before any event).
    pub fn new(assembly: A) -> StreamedReply<A> {
        StreamedReply { sse: SseReader::default(), fresh: assembly.clone(), assembly, shown: false }
    }

    /// Reads one line of a body, handing the output on to `chunks`.
    pub fn line(&mut self, line: BodyLine<'_>, chunks: &Queue<Chunk>) -> Result<(), Failure> {
        match line {
            BodyLine::Start => {
                if std::mem::take(&mut self.shown) {
                    chunks.push(Chunk::Restart);
                }
                self.sse.reset();
                self.assembly = self.fresh.clone();
                Ok(())
            }
            BodyLine::Line(line) => match self.sse.line(line) {
                Some(event) => self.assembly.event(event, &mut Output { chunks, shown: &mut self.shown }),
                None => Ok(()),
            },
            BodyLine::End if self.assembly.ended() => Ok(()),
            BodyLine::End => Err(Failure::Transport(A::CUT_SHORT.to_string())),
        }
    }

    /// The assembly, once the transport read the whole stream.
    pub fn into_assembly(self) -> A {
        self.assembly
    }

    /// Posts the streamed request `body` through `transport` (as
    /// [`Transport::post_lines`] does) and reads its reply with `assembly`,
    /// handing the output on to `chunks`: the assembly once the whole
    /// stream is read, and the answer to settle with its usage.
    pub async fn post<'t>(
        transport: &'t Transport,
        body: Vec<u8>,
        parse_error: fn(u16, &[u8]) -> ApiError,
        demand: Demand<'_>,
        assembly: A,
        chunks: &Queue<Chunk>,
    ) -> Result<(A, Answer<'t>), Failure> {
        let mut streamed = StreamedReply::new(assembly);
        let mut each = |line: BodyLine<'_>| streamed.line(line, chunks);
        let answer = transport.post_lines(body, parse_error, demand, &mut each).await?;
        Ok((streamed.into_assembly(), answer))
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
