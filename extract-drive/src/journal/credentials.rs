//! The PostgreSQL journal's one masking of credentials: [`mask`] takes
//! every string the journal shows (its URL in `Debug` and in messages, a
//! failure's text) and replaces every password in it by `***`, in every
//! form tokio-postgres reads (`Config`'s `FromStr`, 0.7):
//!
//! - A URL (`postgres://` or `postgresql://`): the driver's user info runs
//!   to the first `@` of the whole string, whatever comes before it (`/`,
//!   `?`, `#`, `:`), and its password from the first `:`, percent-encoded
//!   or not. An `@` a password left unescaped makes more of it look like a
//!   host, so the mask runs to the last `@` before the query (the first `?`
//!   after the driver's user info, when what follows it reads as the
//!   driver's settings), and to the last `@` of all otherwise. A query's
//!   `password` (its key percent-decoded) is masked up to the next `&` that
//!   starts a setting the driver knows.
//! - Key-value settings (`host=db password = 'it\'s' dbname=x`): `password`
//!   with spaces around `=` or none, its value quoted (`\` escapes, up to the
//!   closing `'`) or not (`\` escapes, up to a space).
//!
//! When in doubt it masks more: the scheme in any letter case, a URL inside
//! other text (from it to the next one, or to the text's end), a `password =` anywhere in a
//! text that is not a URL.

use std::ops::Range;

/// What a password is shown as.
const SHOWN: &str = "***";

/// The settings tokio-postgres 0.7 reads (`Config::param`): in a URL's
/// query, an `&` followed by one of them ends a password's value.
const SETTINGS: &[&str] = &[
    "user",
    "password",
    "dbname",
    "options",
    "application_name",
    "sslmode",
    "sslnegotiation",
    "host",
    "hostaddr",
    "port",
    "connect_timeout",
    "tcp_user_timeout",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_retries",
    "target_session_attrs",
    "channel_binding",
    "load_balance_hosts",
];

/// `text` (a connection string, or any text that may quote one) with every
/// password replaced by `***`.
pub fn mask(text: &str) -> String {
    mask_urls(&mask_key_values(text))
}

/// Every `password = value` outside a URL's query masked, the value quoted
/// or not, as the driver's key-value parser reads it.
fn mask_key_values(text: &str) -> String {
    // ASCII lowercasing keeps every byte where it was.
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let (mut copied, mut from) = (0, 0);
    while let Some(at) = lower[from..].find("password").map(|i| from + i) {
        from = at + "password".len();
        // `?password=` and `&password=` are a URL's settings: `mask_url`'s.
        if text[..at].ends_with(['?', '&']) {
            continue;
        }
        let Some(value) = text[from..].trim_start().strip_prefix('=') else { continue };
        let value = value.trim_start();
        let start = text.len() - value.len();
        let end = start + setting_len(value);
        if end > start {
            out.push_str(&text[copied..start]);
            out.push_str(SHOWN);
            (copied, from) = (end, end);
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// The length of the key-value setting's value `value` starts with: a
/// quoted one to its closing `'` (the whole text when it has none), else
/// to the first space; `\` escapes the character after it in both.
fn setting_len(value: &str) -> usize {
    let quoted = value.starts_with('\'');
    let mut chars = value.char_indices().skip(usize::from(quoted));
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '\'' if quoted => return i + 1,
            c if !quoted && c.is_whitespace() => return i,
            _ => {}
        }
    }
    value.len()
}

/// `text` with each URL in it masked: from each `postgres://` or
/// `postgresql://` (any letter case) to the next, or to the end.
fn mask_urls(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let starts: Vec<usize> = (0..lower.len())
        .filter(|&i| lower[i..].starts_with("postgres://") || lower[i..].starts_with("postgresql://"))
        .collect();
    let Some(&first) = starts.first() else { return text.to_string() };
    let mut out = text[..first].to_string();
    for (n, &start) in starts.iter().enumerate() {
        let end = starts.get(n + 1).copied().unwrap_or(text.len());
        out.push_str(&mask_url(&text[start..end]));
    }
    out
}

/// One URL (from its scheme) with the password of its user info and of its
/// query masked.
fn mask_url(url: &str) -> String {
    let base = url.find("://").map_or(0, |i| i + 3);
    let rest = &url[base..];
    // What to mask, as ranges of `rest`.
    let mut masked: Vec<Range<usize>> = Vec::new();
    let first_at = rest.find('@');
    // The driver's query: the first `?` after its user info.
    let after_user_info = first_at.unwrap_or(0);
    let driver_query = rest[after_user_info..].find('?').map(|q| after_user_info + q);
    if let Some(first_at) = first_at {
        let at = match driver_query.filter(|&q| reads_as_settings(&rest[q + 1..])) {
            Some(q) => rest[..q].rfind('@'),
            None => rest.rfind('@'),
        }
        .unwrap_or(first_at);
        if let Some(colon) = rest[..at].find(':') {
            masked.push(colon + 1..at);
        }
        // The query after the user info masked, when it is another.
        if let Some(q) = rest[at..].find('?').map(|q| at + q)
            && Some(q) != driver_query
        {
            masked.extend(query_passwords(rest, q + 1));
        }
    }
    if let Some(q) = driver_query {
        masked.extend(query_passwords(rest, q + 1));
    }
    masked.sort_by_key(|range| range.start);
    let mut out = url[..base].to_string();
    let mut copied = 0;
    for range in masked {
        if range.end <= copied {
            continue;
        }
        if range.start > copied {
            out.push_str(&rest[copied..range.start]);
            out.push_str(SHOWN);
        } else if !out.ends_with(SHOWN) {
            out.push_str(SHOWN);
        }
        copied = range.end;
    }
    out.push_str(&rest[copied..]);
    out
}

/// Whether a URL's query reads as the driver's settings: it starts with
/// `key=`, `key` one the driver knows (an `&` in a password may make a
/// later part of it no setting).
fn reads_as_settings(query: &str) -> bool {
    query.is_empty() || starts_setting(query)
}

fn is_setting(key: &str) -> bool {
    let key = decoded(key);
    SETTINGS.iter().any(|s| key.trim().eq_ignore_ascii_case(s))
}

fn is_password(key: &str) -> bool {
    decoded(key).trim().eq_ignore_ascii_case("password")
}

/// The values of the `password` settings of the query that starts at
/// `start` of `text`, each up to the next `&` that starts a setting the
/// driver knows (or the end).
fn query_passwords(text: &str, start: usize) -> Vec<Range<usize>> {
    let next = |from: usize| text[from..].find('&').map_or(text.len(), |i| from + i);
    let mut values = Vec::new();
    let mut pos = start;
    while pos <= text.len() {
        let mut end = next(pos);
        if let Some((key, _)) = text[pos..end].split_once('=')
            && is_password(key)
        {
            while end < text.len() && !starts_setting(&text[end + 1..]) {
                end = next(end + 1);
            }
            values.push(pos + key.len() + 1..end);
        }
        pos = end + 1;
    }
    values
}

/// Whether `text` starts with `key=`, `key` a setting the driver knows.
fn starts_setting(text: &str) -> bool {
    text.split_once('=').is_some_and(|(key, _)| !key.contains('&') && is_setting(key))
}

/// `text` percent-decoded as the driver decodes a URL's keys (an invalid
/// escape kept as written).
fn decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::mask;
    use crate::journal::Journal;

    #[test]
    fn every_form_the_driver_reads_is_masked() {
        for (written, shown) in [
            ("postgres://extract:s3cret@db:5432/x", "postgres://extract:***@db:5432/x"),
            ("postgres://extract@db/x", "postgres://extract@db/x"),
            ("postgres://db:5432/x", "postgres://db:5432/x"),
            ("postgresql://u:p%40ss@db/x?sslmode=disable", "postgresql://u:***@db/x?sslmode=disable"),
            (
                "postgres://db/x?user=u&password=s3cret&sslmode=disable",
                "postgres://db/x?user=u&password=***&sslmode=disable",
            ),
            // An `&` followed by no setting the driver knows may be the password's.
            ("postgres://db/x?user=u&password=s3&cret", "postgres://db/x?user=u&password=***"),
            ("postgres://db/x?password=s3cret&x=1&port=5432", "postgres://db/x?password=***&port=5432"),
            // The driver's user info ends at the first `@`, wherever it is.
            ("postgres://u:pw/9?x@host/db", "postgres://u:***@host/db"),
            ("postgres://u:wrong?pass@host/db", "postgres://u:***@host/db"),
            ("postgres://u:p#w:x@host/db", "postgres://u:***@host/db"),
            // An `@` left unescaped: all of what may be the password.
            ("postgres://u:p@ss@host/db", "postgres://u:***@host/db"),
            ("postgres://u:a@b/c@host/db", "postgres://u:***@host/db"),
            ("postgres://u@x:p@host/db", "postgres://u@x:***@host/db"),
            (
                "postgres://u:pw@host/db?application_name=me@laptop",
                "postgres://u:***@host/db?application_name=me@laptop",
            ),
            // A query's keys are percent-decoded; its values end only at the next setting.
            ("postgres://u@host/db?pass%77ord=s3cret", "postgres://u@host/db?pass%77ord=***"),
            (
                "postgres://u@host/db?password=a b&sslmode=disable",
                "postgres://u@host/db?password=***&sslmode=disable",
            ),
            (
                "postgres://u@host/db?password=a&b&sslmode=disable",
                "postgres://u@host/db?password=***&sslmode=disable",
            ),
            ("POSTGRES://u:pw@host/db", "POSTGRES://u:***@host/db"),
            // Key-value settings: spaces around `=`, quotes with escapes, escaped spaces.
            ("host=db user=u password='a b' dbname=x", "host=db user=u password=*** dbname=x"),
            ("host=db password=s3cret", "host=db password=***"),
            ("host=db password = secret dbname=x", "host=db password = *** dbname=x"),
            ("host=db password =secret dbname=x", "host=db password =*** dbname=x"),
            (r"host=db password='it\'s a secret' dbname=x", "host=db password=*** dbname=x"),
            (r"host=db password=a\ b dbname=x", "host=db password=*** dbname=x"),
            (r"host=db password=\'a dbname=x", "host=db password=*** dbname=x"),
            ("host=db password='never closed dbname=x", "host=db password=***"),
            // In a failure's text.
            (
                "cannot reach postgres://u:p@ss@host/db: refused",
                "cannot reach postgres://u:***@host/db: refused",
            ),
        ] {
            assert_eq!(mask(written), shown, "{written}");
        }
    }

    /// The letters of a generated password's marked runs: no other text of
    /// a message or a URL here holds three of them in a row.
    const MARKS: &str = "QZJKXWV";

    /// Passwords of runs of marked letters and the characters that end a
    /// URL's parts or a key-value setting.
    fn password() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            prop::sample::select(vec![
                "/", "?", "@", "#", "%", ":", " ", "'", "\\", "&", "=", "\t", "%40", "%2F"
            ])
            .prop_map(str::to_string),
            "[QZJKXWV]{3,6}",
        ];
        prop::collection::vec(piece, 1..10)
            .prop_map(|pieces| pieces.concat())
            .prop_filter("a marked run", |p| p.contains(|c| MARKS.contains(c)))
    }

    /// The first part of `password` that `shown` holds: the whole, or one of
    /// its marked runs.
    fn leak<'p>(shown: &str, password: &'p str) -> Option<&'p str> {
        if shown.contains(password) {
            return Some(password);
        }
        password.split(|c| !MARKS.contains(c)).filter(|run| !run.is_empty()).find(|run| shown.contains(run))
    }

    fn percent_encoded(text: &str) -> String {
        text.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect()
    }

    /// `text` as a quoted key-value setting holds it: `\` and `'` escaped.
    fn quoted(text: &str) -> String {
        format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
    }

    /// `text` as an unquoted key-value setting holds it: every character
    /// but a letter escaped with `\`.
    fn escaped(text: &str) -> String {
        text.chars().map(|c| if c.is_alphanumeric() { c.to_string() } else { format!("\\{c}") }).collect()
    }

    /// Every way to give the driver `password` for a server at
    /// `host:port`, and whether the driver reads exactly `password` from it.
    fn forms(password: &str, host: &str, port: u16) -> Vec<(String, bool)> {
        let encoded = percent_encoded(password);
        let raw_in_user_info = !password.contains(['@', '%']);
        let raw_in_query = !password.contains(['&', '%']);
        vec![
            (format!("postgres://u:{encoded}@{host}:{port}/db"), true),
            (format!("postgresql://u:{encoded}@{host}:{port}/db?sslmode=disable"), true),
            (format!("postgres://u:{password}@{host}:{port}/db"), raw_in_user_info),
            (format!("postgres://u@{host}:{port}/db?password={encoded}"), true),
            (format!("postgres://u@{host}:{port}/db?sslmode=disable&password={password}"), raw_in_query),
            (format!("postgres://u@{host}:{port}/db?password={password}&sslmode=disable"), raw_in_query),
            (format!("host={host} port={port} user=u password={} dbname=db", quoted(password)), true),
            (format!("host={host} port={port} user=u password = {} dbname=db", quoted(password)), true),
            (format!("password={} host={host} port={port} user=u", quoted(password)), true),
            (format!("host={host} port={port} password={} user=u dbname=db", escaped(password)), true),
            (format!("host={host} port={port} user=u password =  {}", escaped(password)), true),
        ]
    }

    proptest! {
        #[test]
        fn no_part_of_a_password_is_left_in_any_form_the_driver_reads(password in password()) {
            for (form, exact) in forms(&password, "db.example", 5432) {
                if exact {
                    let config: tokio_postgres::Config = form.parse().expect("the driver reads the form");
                    prop_assert_eq!(config.get_password(), Some(password.as_bytes()), "{}", form);
                }
                let shown = mask(&form);
                prop_assert_eq!(leak(&shown, &password), None, "{} shown as {}", form, shown);
            }
        }
    }

    /// A port of 127.0.0.1 nothing listens on.
    fn closed_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
        #[test]
        fn no_part_of_a_password_is_in_the_debug_the_name_or_the_error_of_an_unreachable_journal(
            password in password()
        ) {
            let port = closed_port();
            for (form, exact) in forms(&password, "127.0.0.1", port) {
                if !exact {
                    continue;
                }
                let journal = Journal::postgres(form.clone(), "march").reconnect_within(std::time::Duration::ZERO);
                let error = journal.export_jsonl(Vec::new()).expect_err("nothing listens there");
                let mut shown = vec![format!("{journal:?}"), journal.shown(), error.to_string(), format!("{error:?}")];
                let mut source = std::error::Error::source(&error);
                while let Some(cause) = source {
                    shown.push(cause.to_string());
                    shown.push(format!("{cause:?}"));
                    source = cause.source();
                }
                prop_assert!(shown[2].contains("cannot connect"), "{}: {}", form, shown[2]);
                for shown in shown {
                    prop_assert_eq!(leak(&shown, &password), None, "{} shown as {}", form, shown);
                }
            }
        }
    }
}
