//! The journal: a run's durable memory, one JSON record per line, appended
//! as things happen, so killing the process at any instant loses nothing
//! but the calls in flight.
//!
//! Records, after a header naming the tool (and a digest of its schema):
//! every reply a document got (with the attempt and a digest of the prompt
//! it answered), every transport failure, and every finished document.
//! Resuming replays a document's replies through a fresh `Run` (the policy
//! is deterministic), so an outcome is always built again by the
//! validators, never read from disk. Each record is one `write` of a whole
//! line to the file: a killed process leaves at most one partial line at the
//! end, which opening truncates; any other line that is not a record is an
//! error naming the file and the line.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{Error, Prompt, Reply, Tool};

/// The journal format's version; a journal of another version is refused.
/// Version 2 added the records of the Message Batches driver and the
/// reply's `done` flag; version 1 journals still read.
const VERSION: u32 = 2;

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "snake_case")]
enum Record {
    /// The first line: what the journal is for.
    Header { version: u32, tool: String, schema: String },
    /// A reply the model gave document `document` at `attempt`, to the
    /// prompt whose digest is `prompt` (from the message batch `batch`, on
    /// the Message Batches API).
    Reply {
        document: String,
        attempt: u32,
        prompt: String,
        reply: Reply,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        batch: Option<String>,
        /// Whether this reply ended the document's run.
        #[serde(default)]
        done: bool,
    },
    /// A transport failure: the document is not finished, and a resumed run tries it again.
    Failed {
        document: String,
        error: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        batch: Option<String>,
    },
    /// A message batch was created, holding these documents at these attempts.
    Batch { id: String, documents: Vec<(String, u32)> },
    /// A result of batch `batch` to be sent again (errored with a transient
    /// error, expired, canceled or missing), without spending an attempt.
    Resent {
        document: String,
        batch: String,
        reason: String,
        /// Whether the resend counts toward the document's limit.
        #[serde(default = "counted")]
        counted: bool,
    },
    /// Every result of the batch has been handled.
    Collected { id: String },
    /// A reviewer's fix of an escalated document (a JSON merge patch that
    /// passed all three layers when it was recorded).
    Reviewed { document: String, fix: serde_json::Value },
    /// The document's run ended with an outcome (rebuilt from its replies on
    /// resume). Written as the reply's `done` flag; a line of its own in
    /// journals of earlier versions, which still read.
    Done { document: String },
}

/// What an earlier run with the same journal did, by document id.
#[derive(Debug, Default)]
pub(crate) struct Recorded {
    /// The replies each document got, oldest first (only those of its last
    /// unfinished or finished run: a failure ends a sequence).
    pub replies: BTreeMap<String, Vec<Reply>>,
    /// The reviewers' fixes, by document id (the last one counts).
    pub reviews: BTreeMap<String, serde_json::Value>,
    /// The message batches created and not yet collected, oldest first,
    /// each with its documents and their attempts.
    pub open_batches: Vec<(String, Vec<(String, u32)>)>,
    /// The results already handled, as (batch id, document id).
    pub handled: BTreeSet<(String, String)>,
    /// How many times each document's current attempt has been resent.
    pub resends: BTreeMap<String, u32>,
}

/// An open journal, appending.
#[derive(Debug)]
pub(crate) struct Journal {
    file: File,
    path: PathBuf,
    /// Set by a short write: nothing may be appended after a partial line.
    broken: AtomicBool,
}

/// A reply's line, serialized before the reply is judged and written once
/// it is (see [`Journal::reply_line`]).
pub(crate) struct ReplyRecord(Vec<u8>);

fn counted() -> bool {
    true
}

/// The digest journals use for a tool's schema and a prompt's text.
pub(crate) fn digest(text: &str) -> String {
    let hash = Sha256::digest(text.as_bytes());
    hash[..16].iter().map(|b| format!("{b:02x}")).collect()
}

impl Journal {
    /// Opens (or creates) the journal at `path` for `tool`, and reads what
    /// an earlier run recorded. A journal written for another tool or schema,
    /// or of another version, is an error; a partial last line (a killed
    /// run) is cut off.
    pub fn open(path: &Path, tool: &Tool) -> Result<(Journal, Recorded), Error> {
        let shown = path.display();
        let io = |what: &str, e: std::io::Error| Error::config(format!("journal {shown}: {what}: {e}"));
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| io("cannot open it", e))?;
        let schema = digest(&serde_json::to_string(tool).unwrap_or_default());
        let mut recorded = Recorded::default();
        let mut whole = 0u64;
        let mut header = None;
        let mut reader = BufReader::new(&file);
        let mut line = String::new();
        let mut number = 0;
        loop {
            line.clear();
            let read = reader.read_line(&mut line).map_err(|e| io("cannot read it", e))?;
            if read == 0 {
                break;
            }
            number += 1;
            if !line.ends_with('\n') {
                // A partial last line: the run was killed while writing it.
                break;
            }
            let record: Record = serde_json::from_str(&line).map_err(|e| {
                Error::config(format!("journal {shown}: line {number} is not a journal record ({e})"))
            })?;
            whole += read as u64;
            match record {
                Record::Header { version, tool: name, schema: written } => {
                    if !(1..=VERSION).contains(&version) || name != tool.name || written != schema {
                        return Err(Error::config(format!(
                            "journal {shown} was written for the tool `{name}` (schema {written}, format {version}), \
                             not for `{}` (schema {schema}, format {VERSION}); use another journal",
                            tool.name
                        )));
                    }
                    header = Some(());
                }
                _ if header.is_none() => {
                    return Err(Error::config(format!(
                        "journal {shown}: line {number} comes before the header"
                    )));
                }
                Record::Reply { document, reply, batch, .. } => {
                    recorded.resends.remove(&document);
                    if let Some(batch) = batch {
                        recorded.handled.insert((batch, document.clone()));
                    }
                    recorded.replies.entry(document).or_default().push(reply)
                }
                Record::Failed { document, batch, .. } => {
                    recorded.resends.remove(&document);
                    if let Some(batch) = batch {
                        recorded.handled.insert((batch, document.clone()));
                    }
                    // The replies before a failure are kept: the resumed run goes on from them.
                    recorded.replies.entry(document).or_default();
                }
                Record::Batch { id, documents } => recorded.open_batches.push((id, documents)),
                Record::Resent { document, batch, counted, .. } => {
                    *recorded.resends.entry(document.clone()).or_default() += u32::from(counted);
                    recorded.handled.insert((batch, document));
                }
                Record::Collected { id } => recorded.open_batches.retain(|(open, _)| *open != id),
                Record::Reviewed { document, fix } => {
                    recorded.reviews.insert(document, fix);
                }
                // A finished document's outcome is rebuilt from its replies.
                Record::Done { .. } => {}
            }
        }
        drop(reader);
        let length = file.metadata().map_err(|e| io("cannot read it", e))?.len();
        if length > whole {
            file.set_len(whole).map_err(|e| io("cannot cut off its partial last line", e))?;
            file.seek(SeekFrom::End(0)).map_err(|e| io("cannot seek", e))?;
        }
        let journal = Journal { file, path: path.to_path_buf(), broken: AtomicBool::new(false) };
        if header.is_none() {
            journal.append_record(&Record::Header { version: VERSION, tool: tool.name.clone(), schema })?;
        }
        Ok((journal, recorded))
    }

    /// [`open`](Journal::open) when there is a path; nothing recorded when not.
    pub fn open_if_any(path: Option<&Path>, tool: &Tool) -> Result<(Option<Journal>, Recorded), Error> {
        match path {
            Some(path) => Journal::open(path, tool).map(|(journal, recorded)| (Some(journal), recorded)),
            None => Ok((None, Recorded::default())),
        }
    }

    /// The line of a reply to `prompt`, serialized from borrows, so a
    /// driver need not keep a copy of the reply while the policy judges it;
    /// [`append_reply`](Journal::append_reply) writes it.
    pub fn reply_line(
        document: &str,
        prompt: &Prompt,
        reply: &Reply,
        batch: Option<&str>,
    ) -> Result<ReplyRecord, Error> {
        // The prompt is its document, the tool (in the header) and, on a
        // correction, what the last attempt gave: that part is digested.
        let sent = prompt.correction.as_ref().map_or(String::new(), |c| digest(&c.previous_output));
        let record =
            ReplyLine { record: "reply", document, attempt: prompt.attempt, prompt: &sent, reply, batch };
        let mut line = line(&record)?;
        // Open again, for `append_reply` to close with or without `done`.
        line.truncate(line.len() - "}\n".len());
        Ok(ReplyRecord(line))
    }

    /// Writes a reply's line, with whether the reply ended the document's run.
    pub fn append_reply(&self, record: ReplyRecord, done: bool) -> Result<(), Error> {
        let mut line = record.0;
        line.extend_from_slice(if done { b",\"done\":true}\n" } else { b"}\n" });
        self.write(&line)
    }

    /// Records a reviewer's fix (already validated).
    pub fn reviewed(&self, document: &str, fix: &serde_json::Value) -> Result<(), Error> {
        self.append_record(&Record::Reviewed { document: document.into(), fix: fix.clone() })
    }

    /// Records a transport failure (of a result of `batch`, if any).
    pub fn failed(&self, document: &str, error: &Error, batch: Option<&str>) -> Result<(), Error> {
        self.append_record(&Record::Failed {
            document: document.into(),
            error: error.to_string(),
            batch: batch.map(str::to_owned),
        })
    }

    /// Records a message batch just created, with its documents and their attempts.
    pub fn batch_created(&self, id: &str, documents: &[(String, u32)]) -> Result<(), Error> {
        self.append_record(&Record::Batch { id: id.into(), documents: documents.to_vec() })
    }

    /// Records that `document`'s result in `batch` is to be sent again.
    pub fn resent(&self, document: &str, batch: &str, reason: &str, counted: bool) -> Result<(), Error> {
        self.append_record(&Record::Resent {
            document: document.into(),
            batch: batch.into(),
            reason: reason.into(),
            counted,
        })
    }

    /// Records that every result of `batch` has been handled.
    pub fn collected(&self, batch: &str) -> Result<(), Error> {
        self.append_record(&Record::Collected { id: batch.into() })
    }

    /// One record, one whole line, one write.
    fn append_record(&self, record: &Record) -> Result<(), Error> {
        let line = line(record)?;
        self.write(&line)
    }

    /// Whole lines, in one `write`: a killed process leaves at most one
    /// partial line. The file is opened for appending, so concurrent writers
    /// need no lock: the kernel appends each `write` whole. A short write is
    /// an error, and the journal takes nothing after it (no line may follow
    /// a partial one).
    fn write(&self, bytes: &[u8]) -> Result<(), Error> {
        let failed = |e: &dyn std::fmt::Display| {
            Error::config(format!("journal {}: cannot append to it: {e}", self.path.display()))
        };
        if self.broken.load(Ordering::Relaxed) {
            return Err(failed(&"an earlier write to it came up short"));
        }
        let written = (&self.file).write(bytes).map_err(|e| failed(&e))?;
        if written < bytes.len() {
            self.broken.store(true, Ordering::Relaxed);
            return Err(failed(&format!(
                "only {written} of {} bytes were written (is the disk full?)",
                bytes.len()
            )));
        }
        Ok(())
    }
}

/// [`Record::Reply`], serialized from borrows: the same line.
#[derive(Serialize)]
struct ReplyLine<'a> {
    record: &'static str,
    document: &'a str,
    attempt: u32,
    prompt: &'a str,
    reply: &'a Reply,
    #[serde(skip_serializing_if = "Option::is_none")]
    batch: Option<&'a str>,
}

/// A record as one line of the journal.
fn line(record: &impl Serialize) -> Result<Vec<u8>, Error> {
    // Sized for a typical reply, so the line is not grown while it is written.
    let mut line = Vec::with_capacity(512);
    serde_json::to_writer(&mut line, record)
        .map_err(|e| Error::config(format!("cannot journal a record: {e}")))?;
    line.push(b'\n');
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writers_on_many_threads_append_whole_lines_without_a_lock() {
        let path = std::env::temp_dir().join(format!("extract-journal-{}-threads", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let tool = Tool {
            name: "t".into(),
            description: String::new(),
            input_schema: serde_json::json!({}),
            strict: false,
        };
        let (journal, _) = Journal::open(&path, &tool).unwrap();
        let prompt = Prompt::new(tool.clone(), "document");
        std::thread::scope(|scope| {
            for thread in 0..8 {
                let (journal, prompt) = (&journal, &prompt);
                scope.spawn(move || {
                    for i in 0..500 {
                        let reply = Reply::tool_call(
                            serde_json::json!({"thread": thread, "i": i, "pad": "x".repeat(i)}),
                        );
                        let line = Journal::reply_line(&format!("d{thread}"), prompt, &reply, None).unwrap();
                        journal.append_reply(line, i == 499).unwrap();
                    }
                });
            }
        });
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches(",\"done\":true}\n").count(), 8, "each writer's last reply ended its run");
        let (_, recorded) = Journal::open(&path, &tool).unwrap();
        assert_eq!(recorded.replies.len(), 8);
        for (document, replies) in &recorded.replies {
            assert_eq!(replies.len(), 500, "{document}: every line whole and in its writer's order");
            let order: Vec<u64> = replies
                .iter()
                .map(|r| match &r.content {
                    crate::ReplyContent::ToolCall { input, .. } => input["i"].as_u64().unwrap(),
                    other => panic!("{other:?}"),
                })
                .collect();
            assert!(order.windows(2).all(|w| w[0] < w[1]));
        }
        let _ = std::fs::remove_file(&path);
    }
}
