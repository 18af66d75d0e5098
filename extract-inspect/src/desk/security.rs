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

/// Whether `host` (a request's `Host` header) is a loopback name, on any
/// port: what a desk served by an application's router, which does not know
/// its listener, answers without a token. A page elsewhere whose name was
/// rebound to 127.0.0.1 (DNS rebinding) still sends its own name.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split_once(']').map_or("", |(ip, _)| ip),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
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
    fn a_mounted_desk_takes_any_loopback_name_and_no_other() {
        for loopback in
            ["127.0.0.1:3000", "127.0.0.1", "localhost:8080", "LOCALHOST", "[::1]:9000", "127.8.0.1:1"]
        {
            assert!(is_loopback_host(loopback), "{loopback}");
        }
        for other in [
            "evil.example:3000",
            "10.0.0.1:80",
            "",
            "localhost.evil.example",
            "[::2]:80",
            "127.0.0.1.evil:80",
        ] {
            assert!(!is_loopback_host(other), "{other}");
        }
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("ab", "abc"));
        assert!(!same_secret("", "abc"));
    }
}
