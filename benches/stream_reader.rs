//! The streaming reader's cost per byte against `serde_json::from_slice` of
//! the whole output, for `benches/stream_reader.sh`, which counts
//! instructions under `valgrind --tool=callgrind`.
//!
//! `stream_reader MODE ITEMS` serializes the invoice output of
//! `benches/common` with ITEMS line items (30: about 1.5 KB, an invoice's
//! answer), then does MODE 100 times: `build` (nothing more), `serde`
//! (`serde_json::from_slice` of the whole), `reader` (the reader fed
//! 20-byte chunks, then finished) or `reader-shown` (the same, asking for
//! the value after every chunk, as a screen that draws each snapshot would).

mod common;

use std::hint::black_box;

use extract::stream::PartialJson;

const ROUNDS: usize = 100;
const CHUNK: usize = 20;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let [mode, items] = args.as_slice() else {
        eprintln!("usage: stream_reader build|serde|reader|reader-shown ITEMS");
        std::process::exit(2);
    };
    let text = serde_json::to_vec(&common::output(items.parse().expect("ITEMS is a number"), false)).unwrap();
    if mode == "build" {
        println!("{}", text.len());
    }
    for _ in 0..ROUNDS {
        match mode.as_str() {
            "build" => {}
            "serde" => {
                black_box(serde_json::from_slice::<serde_json::Value>(black_box(&text)).unwrap());
            }
            "reader" | "reader-shown" => {
                let mut reader = PartialJson::new();
                for chunk in black_box(&text).chunks(CHUNK) {
                    reader.push_bytes(chunk).unwrap();
                    if mode == "reader-shown" {
                        black_box(reader.value());
                    }
                }
                black_box(reader.finish().unwrap());
            }
            _ => panic!("unknown mode {mode}"),
        }
    }
}
