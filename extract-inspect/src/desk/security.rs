//! What keeps the desk safe by default: the access token (needed off
//! loopback, compared in constant time), the CSRF token every form carries,
//! the Content-Security-Policy and the other headers every response gets.

use std::net::SocketAddr;

use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use subtle::ConstantTimeEq;

use crate::Error;

/// The shortest access token the desk accepts: guessing one is hopeless.
pub(crate) const TOKEN_MIN_CHARS: usize = 16;

/// The cookie that carries the access token once the browser opened the
/// desk's address with `?token=`.
pub(crate) const TOKEN_COOKIE: &str = "extract_desk_token";

/// Nothing from outside: scripts, styles, frames and images from the desk
/// only, forms posted to it only, no plugins but its own PDFs, and no
/// page elsewhere may frame it. No inline script or style is allowed.
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self'; frame-src 'self'; object-src 'self'; form-action 'self'; base-uri 'none'; \
     frame-ancestors 'self'";

/// The headers every response carries, beside the CSP.
pub(crate) fn hardening() -> [(HeaderName, HeaderValue); 4] {
    [
        (header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
        (header::REFERRER_POLICY, HeaderValue::from_static("no-referrer")),
        (header::X_FRAME_OPTIONS, HeaderValue::from_static("SAMEORIGIN")),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
    ]
}

/// 32 random bytes from the operating system, as hex: a CSRF token.
pub(crate) fn random_token() -> Result<String, Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| Error::config(format!("the desk cannot get random bytes for its CSRF token: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `given` is `expected`, in time that does not depend on where they differ.
pub(crate) fn same_secret(given: &str, expected: &str) -> bool {
    bool::from(given.as_bytes().ct_eq(expected.as_bytes()))
}

/// `Err` when `addresses` (what the desk is to bind) are not all loopback
/// and there is no token, or when the token is too short to protect anything.
pub(crate) fn check_binding(addresses: &[SocketAddr], token: Option<&str>, shown: &str) -> Result<(), Error> {
    if let Some(token) = token
        && token.chars().count() < TOKEN_MIN_CHARS
    {
        return Err(Error::config(format!(
            "the desk's access token has {} characters; give it at least {TOKEN_MIN_CHARS}",
            token.chars().count()
        )));
    }
    if token.is_none() && addresses.iter().any(|a| !a.ip().is_loopback()) {
        return Err(Error::config(format!(
            "the desk would serve {shown}, which is not a loopback address, without an access token: anyone who \
             can reach it could read the documents and record reviews. Give it one with Desk::token, or serve \
             127.0.0.1"
        )));
    }
    Ok(())
}

/// `path` as a redirect's target when it is a path of this desk (one `/`
/// first, not `//` nor `/\`, which a browser reads as another host);
/// else the queue.
pub(crate) fn desk_path(path: &str) -> &str {
    let own = path.starts_with('/') && !path[1..].starts_with(['/', '\\']);
    if own { path } else { "/" }
}

/// Whether `host` (a request's `Host` header) names the desk at `address`:
/// its IP and port, or `localhost` with its port.
pub(crate) fn is_own_host(host: &str, address: SocketAddr) -> bool {
    let port = address.port();
    let own = match address {
        SocketAddr::V4(v4) => format!("{}:{port}", v4.ip()),
        SocketAddr::V6(v6) => format!("[{}]:{port}", v6.ip()),
    };
    host.eq_ignore_ascii_case(&own) || host.eq_ignore_ascii_case(&format!("localhost:{port}"))
}

/// The access token a request presents: `Authorization: Bearer`, or the cookie.
pub(crate) fn presented(headers: &HeaderMap) -> Option<String> {
    if let Some(bearer) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    {
        return Some(bearer.trim().to_string());
    }
    cookie(headers, TOKEN_COOKIE)
}

/// The value of cookie `name`, percent-decoded.
pub(crate) fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| percent_encoding::percent_decode_str(value).decode_utf8_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redirect_stays_on_the_desk() {
        assert_eq!(desk_path("/document/inv-001"), "/document/inv-001");
        assert_eq!(desk_path("/"), "/");
        for elsewhere in ["//evil.example/", "/\\evil.example/", "", "evil.example", "https://evil.example/"]
        {
            assert_eq!(desk_path(elsewhere), "/", "{elsewhere:?}");
        }
    }

    #[test]
    fn off_loopback_the_desk_needs_a_token_of_some_length() {
        let loopback: SocketAddr = "127.0.0.1:8088".parse().unwrap();
        let any: SocketAddr = "0.0.0.0:8088".parse().unwrap();
        assert!(check_binding(&[loopback], None, "127.0.0.1:8088").is_ok());
        let refused = check_binding(&[any], None, "0.0.0.0:8088").unwrap_err().to_string();
        assert!(refused.contains("0.0.0.0:8088") && refused.contains("Desk::token"), "{refused}");
        assert!(check_binding(&[any], Some("short"), "0.0.0.0:8088").is_err());
        assert!(check_binding(&[any], Some("a-token-of-twenty-chars"), "0.0.0.0:8088").is_ok());
    }

    #[test]
    fn only_the_desks_own_address_is_its_host() {
        let address: SocketAddr = "127.0.0.1:8088".parse().unwrap();
        assert!(is_own_host("127.0.0.1:8088", address));
        assert!(is_own_host("LOCALHOST:8088", address));
        for other in ["evil.example:8088", "127.0.0.1:8089", "127.0.0.1", "", "127.0.0.1:8088.evil.example"] {
            assert!(!is_own_host(other, address), "{other}");
        }
        let v6: SocketAddr = "[::1]:9000".parse().unwrap();
        assert!(is_own_host("[::1]:9000", v6));
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("ab", "abc"));
        assert!(!same_secret("", "abc"));
    }
}
