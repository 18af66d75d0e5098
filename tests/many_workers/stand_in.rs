//! A stand-in of the Messages API on 127.0.0.1 that many worker processes
//! call at once: it reads each request's document (`amounts 1 2 3 total 6`),
//! answers after a fixed latency as a model would (`wrong` drops the last
//! amount on a first attempt, so the check fails and the correction fixes
//! it), and records when each request arrived and each answer left. One
//! request, by its number, can be answered `429` with `retry-after: 1`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

use crate::support::server::read_request;

/// One request the stand-in answered, timed by the wall clock (the one a
/// PostgreSQL server on this machine writes too).
#[derive(Debug, Clone, Copy)]
pub struct Call {
    pub arrived: SystemTime,
    pub answered: SystemTime,
    pub status: u16,
}

pub struct StandIn {
    pub base_url: String,
    calls: Arc<Mutex<Vec<Call>>>,
}

impl StandIn {
    /// A stand-in answering after `latency`; request number `rate_limited`
    /// (counting from 0), if any, is answered 429 with `retry-after: 1`.
    pub async fn start(latency: Duration, rate_limited: Option<usize>) -> StandIn {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let calls = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::new(Mutex::new(0usize));
        let record = calls.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let _ = stream.set_nodelay(true);
                let (record, seen) = (record.clone(), seen.clone());
                tokio::spawn(async move {
                    // One connection may carry many requests (the client keeps it alive).
                    while let Some(request) = read_request(&mut stream).await {
                        let arrived = SystemTime::now();
                        let number = {
                            let mut seen = seen.lock().unwrap();
                            *seen += 1;
                            *seen - 1
                        };
                        tokio::time::sleep(latency).await;
                        let (status, body, extra) = if Some(number) == rate_limited {
                            let error = json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}});
                            (429, error.to_string(), "retry-after: 1\r\n")
                        } else {
                            (200, model(&request.json()).to_string(), "")
                        };
                        let head = format!(
                            "HTTP/1.1 {status} Stand-in\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\n\r\n",
                            body.len()
                        );
                        let answered = SystemTime::now();
                        record.lock().unwrap().push(Call { arrived, answered, status });
                        // One write: a second small one would wait for the client's
                        // delayed ACK (Nagle), adding 40 ms to every answer.
                        if stream.write_all(format!("{head}{body}").as_bytes()).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        StandIn { base_url, calls }
    }

    /// Every request answered so far, in the order answered.
    pub fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    /// How many requests were answered.
    pub fn count(&self) -> usize {
        self.calls.lock().unwrap().len()
    }
}

/// The model behind the stand-in.
pub fn model(params: &Value) -> Value {
    let messages = params["messages"].as_array().unwrap();
    let correction = messages.len() > 1 || messages[0]["content"].as_array().is_some_and(|c| c.len() > 1);
    let text = params["messages"].to_string();
    let start = text.find("amounts ").expect("the document is in the request");
    let words: Vec<&str> = text[start..]
        .split(|c: char| c.is_whitespace() || c == '"' || c == '\\')
        .filter(|w| !w.is_empty())
        .collect();
    let total_at = words.iter().position(|w| *w == "total").unwrap();
    let mut amounts: Vec<f64> = words[1..total_at].iter().map(|w| w.parse().unwrap()).collect();
    if words.get(total_at + 2) == Some(&"wrong") && !correction {
        amounts.pop();
    }
    let items: Vec<Value> = amounts.iter().map(|a| json!({"amount": a})).collect();
    let total: f64 = words[total_at + 1].parse().unwrap();
    json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": params["model"],
        "content": [{"type": "tool_use", "id": "toolu_1", "name": params["tools"][0]["name"], "input": {"line_items": items, "total": total}}],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 100, "output_tokens": 20}
    })
}
