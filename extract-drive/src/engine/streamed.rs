//! The streaming call step of [`Engine::drive`](super::Engine::drive): a
//! model's reply read chunk by chunk into a [`PartialJson`], each prefix
//! shown as a [`Snapshot`] and judged as values finish, and the attempt
//! stopped (the model's stream dropped, so its request is cancelled) as
//! soon as a finished value fails a check nothing later can change.

use std::collections::HashSet;

use futures_util::StreamExt;

use crate::events::Event;
use crate::queued::Queue;
use crate::stream::{Judgement, PartialJson, Snapshot};
use crate::{Chunk, Error, FieldPath, Model, Prompt, Reply, Usage};

/// Judges a prefix of an output for one type (`stream::judge::<T>`).
pub type PrefixJudge = fn(&PartialJson, Option<&str>) -> Judgement;

/// The events a streamed drive produces before its outcome, for the
/// [`queued_stream`](crate::queued::queued_stream) that polls the drive.
pub type EventQueue<T> = Queue<Event<T>>;

/// How a job's calls stream: where their events go, how a prefix is
/// judged, and whether a prefix that already failed ends the attempt.
pub struct Streaming<T> {
    pub(crate) events: EventQueue<T>,
    pub(crate) judge: PrefixJudge,
    pub(crate) stop_early: bool,
}

impl<T> Streaming<T> {
    fn send(&self, event: Event<T>) {
        self.events.push(event);
    }

    /// Starts attempt `attempt` after the `violations` of the one before.
    pub(crate) fn retry(&self, attempt: u32, violations: crate::Violations) {
        self.send(Event::Retry { attempt, violations });
    }

    /// One call of `model` with `prompt`, streamed: its reply, or the
    /// prefix it was stopped at ([`Reply::stopped`], its usage estimated).
    pub(crate) async fn call(&self, model: &dyn Model, prompt: &Prompt) -> Result<Reply, Error> {
        let text = prompt.document.searchable_text();
        // A patch correction's output is a patch, not the type's value: it
        // is neither shown nor judged until the run applies it.
        let shown = !prompt.asks_for_patch();
        let mut chunks = model.stream(prompt);
        let mut output = Output::default();
        while let Some(chunk) = chunks.next().await {
            match chunk? {
                Chunk::Output(_) if !shown => {}
                Chunk::Output(piece) => {
                    if let Some(stopped_by) = output.read(&piece, self.judge, text, self.stop_early) {
                        // Dropping the stream drops the backend's connection.
                        drop(chunks);
                        let usage = estimated_usage(prompt, &output.text);
                        return Ok(Reply::stopped(output.text, stopped_by).with_usage(usage));
                    }
                    if output.readable() {
                        output.shown = true;
                        self.send(Event::Partial(output.snapshot()));
                        // The consumer takes each snapshot before the next chunk is read:
                        // a model faster than the consumer waits in its connection's
                        // buffers, not as snapshots in memory.
                        YieldOnce::default().await;
                    }
                }
                Chunk::Restart => {
                    // The consumer hears of a restart only if it was shown something to forget.
                    if std::mem::take(&mut output).shown {
                        self.send(Event::Restart);
                    }
                }
                Chunk::Done(reply) => return Ok(reply),
            }
        }
        Err(Error::invalid_response(format!(
            "the stream of {} ended without its reply (no final chunk)",
            model.name()
        )))
    }
}

/// The output of the attempt in flight.
#[derive(Default)]
struct Output {
    text: String,
    /// `None` once the text is not JSON: nothing more is shown or judged,
    /// and the whole reply is judged as `extract` judges it.
    reader: Option<PartialJson>,
    started: bool,
    /// The complete paths so far, in the order they completed (they stay
    /// complete: a judgement that could not read its prefix keeps them),
    /// and the same as a set, for the merge of each judgement.
    complete: Vec<FieldPath>,
    completed: HashSet<FieldPath>,
    /// Whether a snapshot of this output was sent.
    shown: bool,
}

impl Output {
    /// Reads `piece`; the violation that ends the attempt, if `stop_early`
    /// and a value it finished fails for good.
    fn read(
        &mut self,
        piece: &str,
        judge: PrefixJudge,
        text: Option<&str>,
        stop_early: bool,
    ) -> Option<String> {
        self.text.push_str(piece);
        let reader = match (&mut self.reader, self.started) {
            (Some(reader), _) => reader,
            (None, false) => self.reader.insert(PartialJson::new()),
            (None, true) => return None,
        };
        self.started = true;
        let finished_any = match reader.push(piece) {
            Ok(finished) => !finished.is_empty(),
            Err(_) => {
                self.reader = None;
                return None;
            }
        };
        // A prefix decides something new only when a value finished.
        if !finished_any {
            return None;
        }
        let Judgement { violations, complete, judged } = judge(reader, text);
        if judged {
            for path in complete {
                if self.completed.insert(path.clone()) {
                    self.complete.push(path);
                }
            }
        }
        if stop_early {
            return violations.first().map(ToString::to_string);
        }
        None
    }

    fn readable(&self) -> bool {
        self.reader.is_some()
    }

    fn snapshot(&self) -> Snapshot {
        let json = self.reader.as_ref().map(PartialJson::value).unwrap_or_default();
        Snapshot::new(json, self.complete.clone())
    }
}

/// The usage of a call stopped after `partial`, estimated (the API reports
/// usage only at a stream's end): four bytes of text to a token, the
/// prompt and the tool's schema as input. The journal marks it estimated.
fn estimated_usage(prompt: &Prompt, partial: &str) -> Usage {
    let tokens = |bytes: usize| (bytes as u64).div_ceil(4);
    let schema = serde_json::to_string(&prompt.tool.input_schema).map_or(0, |s| s.len());
    Usage::new(tokens(prompt.to_string().len() + schema), tokens(partial.len()))
}

/// Returns `Pending` once (asking to be polled again at once): the drive
/// lets the stream hand out what it queued before it goes on.
#[derive(Default)]
struct YieldOnce(bool);

impl std::future::Future for YieldOnce {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        if std::mem::replace(&mut self.0, true) {
            return std::task::Poll::Ready(());
        }
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}
