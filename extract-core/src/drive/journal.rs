//! The journal: a run's durable memory, one JSON record per line, appended
//! as things happen, so killing the process at any instant loses nothing
//! but the calls in flight.
//!
//! Records, after a header naming the tool (and a digest of its schema):
//! every reply a document got (with the attempt and a digest of the prompt
//! it answered), every transport failure, and every finished document.
//! Resuming replays a document's replies through a fresh `Run` (the policy
//! is deterministic), so an outcome is always built again by the
//! validators, never read from disk.
//!
//! Each record is copied whole, in order, into a shared writable mapping of
//! the file: once copied it is in the kernel's page cache, where a killed
//! process cannot lose it, as after a `write`, but without a system call
//! per record. The file grows ahead of the records, a chunk of written
//! zeros at a time (never a sparse extension), so that a full disk is an
//! error when a chunk is written, never a fault while a record is copied; a
//! writer grows it outside the lock while the others go on copying. A
//! journal closed normally is cut back to its records. A killed process
//! leaves at most one partial record, then zeros, which opening cuts off;
//! any other line that is not a record is an error naming the file and the
//! line. One run at a time: the journal's file is locked while it is open.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

use memmap2::{MmapOptions, MmapRaw};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{Error, Prompt, Reply, ReplyContent, Tool, Usage};

/// The journal format's version; a journal of another version is refused.
/// Version 2 added the records of the Message Batches driver and the
/// reply's `done` flag; version 3 the compact `call` record of a tool call.
/// Journals of earlier versions still read.
const VERSION: u32 = 3;

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "snake_case")]
enum Record {
    /// The first line: what the journal is for.
    Header { version: u32, tool: String, schema: String },
    /// A reply the model gave document `document` at `attempt`, to the
    /// prompt whose digest is `prompt` (from the message batch `batch`, on
    /// the Message Batches API). A tool call is a [`Record::Call`].
    Reply {
        document: String,
        attempt: u32,
        prompt: String,
        reply: Reply,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        batch: Option<String>,
        /// Whether this reply ended the document's run.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        done: bool,
    },
    /// A reply that called a tool, as [`Record::Reply`] holds it but in a
    /// third fewer bytes: the prompt's digest only on a correction, the
    /// tool's name only when the model named it, and the usage as
    /// `[input, output, cache read, cache write]` tokens.
    Call {
        document: String,
        attempt: u32,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        prompt: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        input: serde_json::Value,
        usage: [u64; 4],
        #[serde(default, skip_serializing_if = "Option::is_none")]
        batch: Option<String>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
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

impl Recorded {
    /// A reply document `document` got (to a request of `batch`, if any).
    fn reply(&mut self, document: String, reply: Reply, batch: Option<String>) {
        self.resends.remove(&document);
        if let Some(batch) = batch {
            self.handled.insert((batch, document.clone()));
        }
        self.replies.entry(document).or_default().push(reply)
    }
}

/// An open journal, appending. Its file stays locked until it is dropped.
#[derive(Debug)]
pub(crate) struct Journal {
    path: PathBuf,
    /// Written through the mapping, and with zeros where it grows.
    file: File,
    /// Where the next record goes; the lock keeps records whole and in order.
    tail: Mutex<Tail>,
    /// Signalled when a writer growing the file is done, for a writer whose
    /// record would not fit before it is.
    grown: Condvar,
    /// How often a writer waited for another growing the file.
    #[cfg(test)]
    growth_waits: std::sync::atomic::AtomicUsize,
}

/// The end of a journal's file, mapped for copying records into.
#[derive(Debug)]
struct Tail {
    /// The bytes of whole records; the file holds zeros after them, up to `end`.
    len: u64,
    /// How much of the file is ready for records: zeros written (so their
    /// disk space is taken) before any record goes there.
    end: u64,
    /// Whether a writer is writing zeros past `end`, outside the lock.
    growing: bool,
    /// A writable mapping of the file from `mapped_from`, reaching far past
    /// its end so that the file can grow under it without a new mapping;
    /// only what lies before `end` is ever touched (beyond a file's end a
    /// mapping faults). `None` before the first record. Shared with a
    /// writer faulting pages in after it let go of the lock.
    map: Option<Arc<MmapRaw>>,
    mapped_from: u64,
}

/// The smallest and largest chunk by which a journal's file grows at once: a
/// chunk is a quarter of the journal so far, within these bounds.
const CHUNK: std::ops::RangeInclusive<u64> = (256 << 10)..=(64 << 20);

/// How far a journal's mapping reaches past the file's end: address space,
/// not memory, on 64-bit Unix; a journal that outgrows it is mapped again
/// from its end. Elsewhere only the space ready for records is mapped (on Windows a
/// mapping longer than its file lengthens the file).
const WINDOW: u64 = if cfg!(unix) && usize::BITS >= 64 { 64 << 30 } else { 0 };

/// A reply's line, serialized before the reply is judged and written once
/// it is (see [`Journal::reply_line`]).
pub(crate) struct ReplyRecord(Vec<u8>);

impl ReplyRecord {
    /// The whole line, with whether the reply ended the document's run.
    fn closed(self, done: bool) -> Vec<u8> {
        let mut line = self.0;
        line.extend_from_slice(if done { br#","done":true}"# } else { b"}" });
        line.push(b'\n');
        line
    }
}

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
        let io = |what: &str, e: std::io::Error| Error::io(format!("journal {shown}: {what}"), e);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| io("cannot open it", e))?;
        file.try_lock().map_err(|e| match e {
            TryLockError::WouldBlock => Error::config(format!(
                "journal {shown} is in use by another run (in this process or another); \
                 wait for it to end, or use another journal"
            )),
            TryLockError::Error(e) => io("cannot lock it", e),
        })?;
        let schema = digest(&serde_json::to_string(tool).unwrap_or_default());
        let mut recorded = Recorded::default();
        let mut whole = 0u64;
        let mut header = None;
        let mut reader = BufReader::new(&file);
        let mut line = Vec::new();
        let mut number = 0;
        loop {
            line.clear();
            let read = reader.read_until(b'\n', &mut line).map_err(|e| io("cannot read it", e))?;
            if read == 0 {
                break;
            }
            number += 1;
            if !line.ends_with(b"\n") || line.contains(&0) {
                // A killed run stopped here: a record copied in part (no
                // record holds a zero byte), then only the zeros it had set
                // aside. A whole record after zeros is not that.
                let after_zeros = line.rsplit(|&b| b == 0).next().unwrap_or_default();
                let whole_record_follows = line.contains(&0)
                    && serde_json::from_slice::<Record>(after_zeros.trim_ascii_end()).is_ok();
                if whole_record_follows || !rest_is_zeros(&mut reader).map_err(|e| io("cannot read it", e))? {
                    return Err(Error::config(format!(
                        "journal {shown}: line {number} is cut short, yet records follow it"
                    )));
                }
                break;
            }
            let record: Record = serde_json::from_slice(&line).map_err(|e| {
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
                Record::Call {
                    document,
                    name,
                    input,
                    usage: [input_tokens, output_tokens, read, write],
                    batch,
                    ..
                } => {
                    let usage = Usage::new(input_tokens, output_tokens).with_cache(read, write);
                    let reply = Reply { content: ReplyContent::ToolCall { name, input }, usage };
                    recorded.reply(document, reply, batch);
                }
                Record::Reply { document, reply, batch, .. } => recorded.reply(document, reply, batch),
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
        }
        let tail = Tail { len: whole, end: whole, growing: false, map: None, mapped_from: whole };
        let journal = Journal {
            path: path.to_path_buf(),
            file,
            tail: Mutex::new(tail),
            grown: Condvar::new(),
            #[cfg(test)]
            growth_waits: Default::default(),
        };
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
        // Sized for a typical reply, so the line is not grown while it is written.
        let mut line = Vec::with_capacity(512);
        write_reply_line(&mut line, document, prompt.attempt, &sent, reply, batch)
            .map_err(|e| Error::config(format!("cannot journal a reply: {e}")))?;
        Ok(ReplyRecord(line))
    }

    /// Writes a reply's line, with whether the reply ended the document's run.
    pub fn append_reply(&self, record: ReplyRecord, done: bool) -> Result<(), Error> {
        self.write(&record.closed(done))
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
    #[cfg(feature = "anthropic")]
    pub fn batch_created(&self, id: &str, documents: &[(String, u32)]) -> Result<(), Error> {
        self.append_record(&Record::Batch { id: id.into(), documents: documents.to_vec() })
    }

    /// Records that `document`'s result in `batch` is to be sent again.
    #[cfg(feature = "anthropic")]
    pub fn resent(&self, document: &str, batch: &str, reason: &str, counted: bool) -> Result<(), Error> {
        self.append_record(&Record::Resent {
            document: document.into(),
            batch: batch.into(),
            reason: reason.into(),
            counted,
        })
    }

    /// Records that every result of `batch` has been handled.
    #[cfg(feature = "anthropic")]
    pub fn collected(&self, batch: &str) -> Result<(), Error> {
        self.append_record(&Record::Collected { id: batch.into() })
    }

    /// One record, one whole line, one write.
    fn append_record(&self, record: &Record) -> Result<(), Error> {
        let line = line(record)?;
        self.write(&line)
    }

    /// Whole lines, copied under the tail's lock: records never interleave,
    /// and a killed process leaves at most one partial record, the last.
    fn write(&self, bytes: &[u8]) -> Result<(), Error> {
        let cannot =
            |e: std::io::Error| Error::io(format!("journal {}: cannot append to it", self.path.display()), e);
        let mut tail = self.tail.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let growth = loop {
            match tail.room(&self.file, bytes.len()).map_err(cannot)? {
                Room::Ready { at, growth } => {
                    // SAFETY: `at` is `bytes.len()` bytes of the mapping, before
                    // `end`, that no other record takes (the lock is held).
                    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), at, bytes.len()) };
                    tail.len += bytes.len() as u64;
                    break growth;
                }
                Room::AfterGrowth => {
                    #[cfg(test)]
                    self.growth_waits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    tail = self.grown.wait(tail).unwrap_or_else(|poisoned| poisoned.into_inner());
                }
            }
        };
        drop(tail);
        if let Some(growth) = growth {
            self.grow(growth);
        }
        Ok(())
    }

    /// Outside the lock, so that the other writers go on copying into the
    /// space ready before: writes the zeros of `growth`, makes them ready for
    /// records, and faults their pages in (one call costs less than a fault
    /// at each page's first record). A failure only leaves the space
    /// unready, for the writer that needs it to take, and report.
    fn grow(&self, growth: std::ops::Range<u64>) {
        let written = write_zeros(&self.file, growth.clone());
        let mut tail = self.tail.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        tail.growing = false;
        if written.is_ok() {
            tail.end = growth.end;
        }
        self.grown.notify_all();
        let map = if written.is_ok() { tail.mapped(&self.file).ok().cloned() } else { None };
        let start = growth.start.max(tail.mapped_from);
        let (offset, length) = (start - tail.mapped_from, growth.end - start);
        drop(tail);
        if let Some(map) = map {
            #[cfg(target_os = "linux")]
            let _ = map.advise_range(memmap2::Advice::PopulateWrite, offset as usize, length as usize);
            #[cfg(not(target_os = "linux"))]
            let _ = (map, offset, length);
        }
    }
}

/// Where a record can go.
enum Room {
    /// At `at` in the mapping; and the range of the file that this writer is
    /// to grow after it lets go of the lock, if any.
    Ready { at: *mut u8, growth: Option<std::ops::Range<u64>> },
    /// Only once the writer growing the file is done.
    AfterGrowth,
}

impl Tail {
    /// Where the next `needed` bytes of records go in the mapping, the space
    /// made ready for them first if it is not (written zeros: never a sparse
    /// extension, which would leave a full disk to fault while a record is
    /// copied). Half a chunk before the ready space runs out, the writer is
    /// given the next chunk to grow.
    fn room(&mut self, file: &File, needed: usize) -> std::io::Result<Room> {
        let wanted = self.len + needed as u64;
        let chunk = (self.len / 4).clamp(*CHUNK.start(), *CHUNK.end()).max(needed as u64);
        if wanted > self.end {
            if self.growing {
                return Ok(Room::AfterGrowth);
            }
            // The first record, or records that caught up with the growth.
            let end = wanted + chunk;
            write_zeros(file, self.end..end)?;
            self.end = end;
        }
        let growth = (wanted + chunk / 2 > self.end && !self.growing).then(|| {
            self.growing = true;
            self.end..self.end + chunk
        });
        let from = self.mapped_from;
        let map = self.mapped(file)?;
        // SAFETY: `wanted <= self.end`, and the mapping reaches at least to
        // `self.end`, so the offset is inside it.
        Ok(Room::Ready { at: unsafe { map.as_mut_ptr().add((self.len - from) as usize) }, growth })
    }

    /// The mapping, made again if it does not reach `end`.
    fn mapped(&mut self, file: &File) -> std::io::Result<&Arc<MmapRaw>> {
        if self.map.as_ref().is_none_or(|map| self.end > self.mapped_from + map.len() as u64) {
            self.map = None;
            let ready = usize::try_from(self.end - self.len)
                .map_err(|_| std::io::Error::other("the record is too large"))?;
            let map = |reach: usize| MmapOptions::new().offset(self.len).len(reach).map_raw(file);
            // Where address space is scarce (a limit on it, a tool that
            // watches memory), only the ready space is mapped, anew each time.
            let window = usize::try_from(WINDOW).unwrap_or(usize::MAX).max(ready);
            self.map = Some(Arc::new(map(window).or_else(|_| map(ready))?));
            self.mapped_from = self.len;
        }
        self.map.as_ref().ok_or_else(|| std::io::Error::other("the journal is not mapped"))
    }
}

/// Writes zeros over `range` of `file`, lengthening it: the page cache gets
/// its pages ready to be written through the mapping (measured, about three
/// times cheaper than fallocate(2), whose pages must first be read as
/// zeros), and the disk space is taken.
fn write_zeros(file: &File, range: std::ops::Range<u64>) -> std::io::Result<()> {
    static ZEROS: [u8; 1 << 20] = [0; 1 << 20];
    let mut at = range.start;
    while at < range.end {
        let now = &ZEROS[..(range.end - at).min(ZEROS.len() as u64) as usize];
        #[cfg(unix)]
        std::os::unix::fs::FileExt::write_all_at(file, now, at)?;
        #[cfg(windows)]
        {
            let mut written = 0;
            while written < now.len() {
                match std::os::windows::fs::FileExt::seek_write(file, &now[written..], at + written as u64)? {
                    0 => return Err(std::io::ErrorKind::WriteZero.into()),
                    more => written += more,
                }
            }
        }
        at += now.len() as u64;
    }
    Ok(())
}

impl Drop for Journal {
    /// Cuts the file back to its records: the zeros after them go.
    fn drop(&mut self) {
        let tail = self.tail.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
        tail.map = None;
        let _ = self.file.set_len(tail.len);
    }
}

/// Whether everything left to read is zero bytes.
fn rest_is_zeros(reader: &mut impl BufRead) -> std::io::Result<bool> {
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(true);
        }
        if buffer.iter().any(|&b| b != 0) {
            return Ok(false);
        }
        let read = buffer.len();
        reader.consume(read);
    }
}

/// A reply's line, left open after its last field for the `done` flag: a
/// tool call as a [`Record::Call`], written by hand, byte for byte what
/// serde writes for it (a test holds the two together), because serde_json
/// escapes every key anew and, measured, that was half the journal's
/// instructions; the values still go through serde_json. Any other reply as
/// a [`Record::Reply`].
fn write_reply_line(
    line: &mut Vec<u8>,
    document: &str,
    attempt: u32,
    prompt: &str,
    reply: &Reply,
    batch: Option<&str>,
) -> serde_json::Result<()> {
    let ReplyContent::ToolCall { name, input } = &reply.content else {
        let record = Record::Reply {
            document: document.into(),
            attempt,
            prompt: prompt.into(),
            reply: reply.clone(),
            batch: batch.map(Into::into),
            done: false,
        };
        serde_json::to_writer(&mut *line, &record)?;
        line.pop(); // the closing brace: `append_reply` writes it
        return Ok(());
    };
    line.extend_from_slice(br#"{"record":"call","document":"#);
    serde_json::to_writer(&mut *line, document)?;
    line.extend_from_slice(br#","attempt":"#);
    line.extend_from_slice(itoa::Buffer::new().format(attempt).as_bytes());
    if !prompt.is_empty() {
        line.extend_from_slice(br#","prompt":"#);
        serde_json::to_writer(&mut *line, prompt)?;
    }
    if let Some(name) = name {
        line.extend_from_slice(br#","name":"#);
        serde_json::to_writer(&mut *line, name)?;
    }
    line.extend_from_slice(br#","input":"#);
    serde_json::to_writer(&mut *line, input)?;
    let Usage { input_tokens, output_tokens, cache_read_tokens, cache_write_tokens } = reply.usage;
    let mut separator = br#","usage":["#.as_slice();
    for tokens in [input_tokens, output_tokens, cache_read_tokens, cache_write_tokens] {
        line.extend_from_slice(separator);
        line.extend_from_slice(itoa::Buffer::new().format(tokens).as_bytes());
        separator = b",";
    }
    line.push(b']');
    if let Some(batch) = batch {
        line.extend_from_slice(br#","batch":"#);
        serde_json::to_writer(&mut *line, batch)?;
    }
    Ok(())
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

    fn tool() -> Tool {
        Tool {
            name: "t".into(),
            description: String::new(),
            input_schema: serde_json::json!({}),
            strict: false,
        }
    }

    fn temp_path(name: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!("extract-journal-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        path
    }

    #[test]
    fn every_kind_of_reply_reads_back_as_it_was_written() {
        let path = temp_path("kinds");
        let replies = [
            Reply::tool_call(serde_json::json!({"total": 3.0})),
            Reply::new(ReplyContent::ToolCallText { name: Some("t".into()), json: "{\"total\":".into() }),
            Reply::new(ReplyContent::Text("I cannot find an invoice here.".into())),
            Reply::new(ReplyContent::Refusal {
                text: "no".into(),
                details: Some(serde_json::json!({"x": 1})),
            }),
            Reply::new(ReplyContent::Truncated { limit: crate::Truncation::MaxTokens, partial: None }),
        ];
        let (journal, _) = Journal::open(&path, &tool()).unwrap();
        let prompt = Prompt::new(tool(), "document");
        for reply in &replies {
            journal.append_reply(Journal::reply_line("d", &prompt, reply, None).unwrap(), false).unwrap();
        }
        drop(journal);
        let (_, recorded) = Journal::open(&path, &tool()).unwrap();
        assert_eq!(recorded.replies["d"], replies);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_killed_writers_partial_record_and_the_zeros_after_it_are_cut_off() {
        let path = temp_path("killed");
        let (journal, _) = Journal::open(&path, &tool()).unwrap();
        let prompt = Prompt::new(tool(), "document");
        let reply = Reply::tool_call(serde_json::json!({"total": 3.0}));
        journal.append_reply(Journal::reply_line("a", &prompt, &reply, None).unwrap(), true).unwrap();
        // What a kill leaves: the file as it is while open (records, then the
        // zeros written ahead), with a record copied only in part.
        let whole = journal.tail.lock().unwrap().len as usize;
        let mut left = std::fs::read(&path).unwrap();
        assert!(left.len() > whole && left[whole..].iter().all(|&b| b == 0), "zeros written ahead");
        let partial = br#"{"record":"reply","document":"b","att"#;
        left[whole..whole + partial.len()].copy_from_slice(partial);
        left[whole + partial.len() + 9] = b'}';
        drop(journal);
        std::fs::write(&path, &left).unwrap();

        let (journal, recorded) = Journal::open(&path, &tool()).unwrap();
        assert_eq!(recorded.replies.keys().collect::<Vec<_>>(), ["a"], "the partial record is cut off");
        drop(journal);
        assert_eq!(std::fs::metadata(&path).unwrap().len() as usize, whole, "and the zeros with it");

        // Records after a cut-off one are not what a killed writer leaves: an error, nothing dropped.
        let mut forged = left.clone();
        forged.truncate(whole + 4096);
        forged.extend_from_slice(b"{\"record\":\"collected\",\"id\":\"x\"}\n");
        std::fs::write(&path, &forged).unwrap();
        let err = Journal::open(&path, &tool()).unwrap_err();
        assert!(err.to_string().contains("line 3 is cut short, yet records follow it"), "{err}");
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_journal_in_use_is_refused_until_it_is_closed() {
        let path = temp_path("in-use");
        let (journal, _) = Journal::open(&path, &tool()).unwrap();
        let err = Journal::open(&path, &tool()).unwrap_err();
        assert!(err.to_string().contains("is in use by another run"), "{err}");
        drop(journal);
        assert!(Journal::open(&path, &tool()).is_ok());
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_journal_grows_chunk_by_chunk() {
        let path = temp_path("grows");
        let (journal, _) = Journal::open(&path, &tool()).unwrap();
        let prompt = Prompt::new(tool(), "document");
        // 3,000 replies of 1 KiB each: several chunks.
        let reply = Reply::tool_call(serde_json::json!({"pad": "x".repeat(1000)}));
        for i in 0..3000 {
            let id = format!("d{i}");
            journal.append_reply(Journal::reply_line(&id, &prompt, &reply, None).unwrap(), true).unwrap();
        }
        drop(journal);
        let (_, recorded) = Journal::open(&path, &tool()).unwrap();
        assert_eq!(recorded.replies.len(), 3000);
        assert!(recorded.replies.values().all(|r| r == std::slice::from_ref(&reply)));
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_reply_line_is_byte_for_byte_the_line_serde_writes() {
        let tool_call =
            |name: Option<&str>, input| ReplyContent::ToolCall { name: name.map(Into::into), input };
        let contents = [
            tool_call(None, serde_json::json!({"total": 3.0, "items": [{"a": "x\"y\n\u{2028}"}]})),
            tool_call(Some("in\"voice"), serde_json::json!(null)),
            ReplyContent::Text("no tool".into()),
            ReplyContent::Refusal { text: "no".into(), details: Some(serde_json::json!({"why": 1})) },
        ];
        let document = "d\"1\n";
        for content in contents {
            for (batch, attempt, prompt, done) in
                [(None, 1, "", true), (Some("msgbatch_\"1"), 3, "ab12", false)]
            {
                let usage = Usage::new(1200, 34).with_cache(5, 6);
                let reply = Reply { content: content.clone(), usage };
                let mut hand = Vec::new();
                write_reply_line(&mut hand, document, attempt, prompt, &reply, batch).unwrap();
                let hand = ReplyRecord(hand).closed(done);
                let (document, prompt, batch) =
                    (document.to_string(), prompt.to_string(), batch.map(Into::into));
                let derived = line(&match content.clone() {
                    ReplyContent::ToolCall { name, input } => Record::Call {
                        document,
                        attempt,
                        prompt,
                        name,
                        input,
                        usage: [1200, 34, 5, 6],
                        batch,
                        done,
                    },
                    _ => Record::Reply { document, attempt, prompt, reply, batch, done },
                })
                .unwrap();
                assert_eq!(String::from_utf8(hand).unwrap(), String::from_utf8(derived).unwrap());
            }
        }
    }

    #[test]
    fn writers_wait_for_a_growing_file_rather_than_copy_past_its_end() {
        // Records of 60 KiB: while one writer writes a chunk of zeros, the
        // others soon use up the half chunk ready and must wait for it.
        let tool = tool();
        let prompt = Prompt::new(tool.clone(), "document");
        let reply = Reply::tool_call(serde_json::json!({"pad": "x".repeat(60 << 10)}));
        for round in 0..20 {
            let path = temp_path(&format!("growing-{round}"));
            let (journal, _) = Journal::open(&path, &tool).unwrap();
            std::thread::scope(|scope| {
                for thread in 0..4 {
                    let (journal, prompt, reply) = (&journal, &prompt, &reply);
                    scope.spawn(move || {
                        for _ in 0..25 {
                            let line =
                                Journal::reply_line(&format!("d{thread}"), prompt, reply, None).unwrap();
                            journal.append_reply(line, false).unwrap();
                        }
                    });
                }
            });
            let waited = journal.growth_waits.load(std::sync::atomic::Ordering::Relaxed) > 0;
            drop(journal);
            let (_, recorded) = Journal::open(&path, &tool).unwrap();
            assert_eq!(recorded.replies.len(), 4);
            let whole = |replies: &Vec<Reply>| replies.len() == 25 && replies.iter().all(|r| r == &reply);
            assert!(recorded.replies.values().all(whole), "every record whole, none lost");
            let _ = std::fs::remove_file(&path);
            if waited {
                return;
            }
        }
        panic!("in 20 rounds no writer waited for the file to grow: the test no longer tests that");
    }

    #[test]
    fn writers_on_many_threads_append_whole_lines_in_their_order() {
        let path = temp_path("threads");
        let tool = tool();
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
        drop(journal);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with("}\n"), "closed, the journal is cut back to its records");
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
