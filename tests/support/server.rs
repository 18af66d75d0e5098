//! What the local stand-in servers of these tests share: the HTTP request
//! parser (one request read off a real socket, head and body), and a
//! scripted server that answers each connection's request with the next
//! scripted step and records every request it received. Writing the bytes by
//! hand is what lets a step cut a body short, reset the connection
//! mid-response or answer later than the client's timeout.
//!
//! Each test binary that includes `tests/support` uses only part of it.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// When the whole request had arrived.
    pub at: std::time::Instant,
}

impl Received {
    /// The value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The body, parsed as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("the client sent JSON")
    }
}

/// Reads one request (its head, then a body of `content-length` bytes);
/// `None` when the connection closes first.
pub async fn read_request(stream: &mut TcpStream) -> Option<Received> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8(buffer[..head_end].to_vec()).ok()?;
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let path = request_line.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize =
        headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = buffer[head_end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Received { method, path, headers, body, at: std::time::Instant::now() })
}

/// What the scripted server does with one request.
pub enum Step {
    /// A complete response.
    Reply { status: u16, headers: Vec<(&'static str, String)>, body: String },
    /// Waits, then does the next step.
    Slow(Duration, Box<Step>),
    /// A 200 whose `content-length` promises more than is sent before the connection closes.
    Truncated(String),
    /// Starts a response, then resets the connection (RST).
    Reset,
    /// A 200 of server-sent events in chunked encoding, written piece by
    /// piece (each flushed, `pause` apart); `cut`: the connection closes
    /// after the last piece without the body's end. A piece the client no
    /// longer reads (it hung up) is counted in `hung_up`.
    Events {
        pieces: Vec<String>,
        pause: Duration,
        cut: bool,
        hung_up: Option<Arc<std::sync::atomic::AtomicUsize>>,
    },
}

/// `text` in pieces split at random byte boundaries (`seed` picks them),
/// at most `longest` bytes each: a stream the client must put together.
pub fn random_pieces(text: &str, seed: u64, longest: usize) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let mut end = (start + 1 + (state >> 33) as usize % longest).min(bytes.len());
        // Pieces are text: a character is never split (bytes arrive whole in UTF-8 here).
        while !text.is_char_boundary(end) {
            end += 1;
        }
        pieces.push(text[start..end].to_string());
        start = end;
    }
    pieces
}

/// A complete response with these headers.
pub fn reply(status: u16, headers: &[(&'static str, &str)], body: String) -> Step {
    Step::Reply { status, headers: headers.iter().map(|(n, v)| (*n, v.to_string())).collect(), body }
}

/// A server on 127.0.0.1 that answers one request per connection with the
/// next step of its script, and records every request.
pub struct Server {
    /// Where the client is pointed.
    pub base_url: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Server {
    /// A server at the root of its address; a request past the end of the
    /// script gets a 418.
    pub async fn start(script: Vec<Step>) -> Server {
        Server::start_at(script, "", || reply(418, &[], "{\"script\":\"exhausted\"}".into())).await
    }

    /// A server whose base URL ends in `path`, answering `when_dry()` to a
    /// request past the end of the script.
    pub async fn start_at(script: Vec<Step>, path: &str, when_dry: fn() -> Step) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}{path}", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        let record = received.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, record.clone(), script.clone(), when_dry));
            }
        });
        Server { base_url, received }
    }

    /// Every request received, in order.
    pub fn requests(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// Every request body, parsed as JSON.
    pub fn bodies(&self) -> Vec<Value> {
        self.requests().iter().map(Received::json).collect()
    }

    /// Every request body, as the bytes that arrived.
    pub fn raw_bodies(&self) -> Vec<Vec<u8>> {
        self.requests().into_iter().map(|r| r.body).collect()
    }
}

/// Serves one connection: one request, one scripted step, then the connection closes.
async fn serve(
    mut stream: TcpStream,
    record: Arc<Mutex<Vec<Received>>>,
    script: Arc<Mutex<VecDeque<Step>>>,
    when_dry: fn() -> Step,
) {
    let Some(request) = read_request(&mut stream).await else { return };
    record.lock().unwrap().push(request);
    let step = script.lock().unwrap().pop_front();
    perform(&mut stream, step.unwrap_or_else(when_dry)).await;
}

async fn perform(stream: &mut TcpStream, mut step: Step) {
    loop {
        match step {
            Step::Slow(delay, next) => {
                tokio::time::sleep(delay).await;
                step = *next;
            }
            Step::Reply { status, headers, body } => {
                let mut head = format!("HTTP/1.1 {status} Scripted\r\ncontent-type: application/json\r\n");
                for (name, value) in headers {
                    write!(head, "{name}: {value}\r\n").unwrap();
                }
                write!(head, "content-length: {}\r\nconnection: close\r\n\r\n", body.len()).unwrap();
                let _ = stream.write_all(head.as_bytes()).await;
                let _ = stream.write_all(body.as_bytes()).await;
                let _ = stream.shutdown().await;
                return;
            }
            Step::Truncated(body) => {
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len() + 500
                );
                let _ = stream.write_all(head.as_bytes()).await;
                let _ = stream.write_all(body.as_bytes()).await;
                let _ = stream.shutdown().await;
                return;
            }
            Step::Events { pieces, pause, cut, hung_up } => {
                let _ = stream.set_nodelay(true);
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
                            transfer-encoding: chunked\r\nconnection: close\r\n\r\n";
                if stream.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                for piece in pieces {
                    tokio::time::sleep(pause).await;
                    let chunk = format!("{:x}\r\n{piece}\r\n", piece.len());
                    if stream.write_all(chunk.as_bytes()).await.and(stream.flush().await).is_err() {
                        if let Some(hung_up) = &hung_up {
                            hung_up.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        }
                        return;
                    }
                }
                if !cut {
                    let _ = stream.write_all(b"0\r\n\r\n").await;
                }
                let _ = stream.shutdown().await;
                return;
            }
            Step::Reset => {
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-le").await;
                let _ = stream.set_zero_linger();
                return; // dropping a zero-linger socket sends RST
            }
        }
    }
}
