//! `Extractor::from_env()`: the backend the environment names, behind one
//! type, so a program runs against Claude or an OpenAI-compatible server
//! without naming either.
//!
//! A trait, not an inherent method: `Extractor` lives in the driver crate,
//! below the backends, and only this facade sees both.

use extract_drive::{Error, Extractor, Model};

/// Builds a value from the process environment: for
/// `Extractor<Box<dyn Model>>`, an extractor over the backend the
/// environment names.
///
/// - `ANTHROPIC_API_KEY` set: Claude ([`anthropic::Client::from_env`](crate::anthropic::Client::from_env),
///   which also reads `ANTHROPIC_MODEL` and `ANTHROPIC_BASE_URL`). It wins
///   when both backends are configured.
/// - else `OPENAI_BASE_URL` or `OPENAI_API_KEY` set: an OpenAI-compatible
///   server ([`openai::Client::from_env`](crate::openai::Client::from_env),
///   which needs `OPENAI_MODEL`).
/// - neither: an [`Error`] of kind `Configuration` naming the variables.
///
/// A backend whose feature is off is not chosen: its variables are named
/// in the error with the feature to turn on.
///
/// ```no_run
/// use extract::{Extractor, model::FromEnv};
/// # #[derive(Debug, serde::Deserialize, schemars::JsonSchema, extract::Extractable)]
/// # struct Invoice { total: f64 }
///
/// let extractor = Extractor::from_env()?; // Claude with ANTHROPIC_API_KEY set
/// let outcome = extractor.extract_blocking::<Invoice>("Total due: 140.00 EUR")?;
/// # Ok::<(), extract::Error>(())
/// ```
pub trait FromEnv: Sized {
    /// The value the process environment describes.
    fn from_env() -> Result<Self, Error> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// The same, reading each variable through `lookup` (a configuration
    /// file, a secrets store, a test's map) instead of the environment.
    fn from_vars(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, Error>;
}

impl FromEnv for Extractor<Box<dyn Model>> {
    fn from_vars(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, Error> {
        let set = |name: &str| lookup(name).is_some_and(|value| !value.trim().is_empty());
        if set("ANTHROPIC_API_KEY") {
            #[cfg(feature = "anthropic")]
            return Ok(Extractor::new(Box::new(crate::anthropic::Client::from_vars(&lookup)?)));
            #[cfg(not(feature = "anthropic"))]
            return Err(Error::config(
                "ANTHROPIC_API_KEY is set, but this build has no Claude backend: turn on the feature `anthropic`",
            ));
        }
        if set("OPENAI_BASE_URL") || set("OPENAI_API_KEY") {
            #[cfg(feature = "openai")]
            return Ok(Extractor::new(Box::new(crate::openai::ClientBuilder::from_vars(&lookup)?.build()?)));
            #[cfg(not(feature = "openai"))]
            return Err(Error::config(
                "OPENAI_BASE_URL or OPENAI_API_KEY is set, but this build has no OpenAI-compatible backend: turn \
                 on the feature `openai`",
            ));
        }
        Err(Error::config(
            "no backend is configured: set ANTHROPIC_API_KEY for Claude, or OPENAI_BASE_URL (and OPENAI_MODEL, \
             and OPENAI_API_KEY if the server needs one) for an OpenAI-compatible server",
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn from(vars: &[(&str, &str)]) -> Result<Extractor<Box<dyn Model>>, Error> {
        let vars: BTreeMap<String, String> =
            vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Extractor::from_vars(|name| vars.get(name).cloned())
    }

    #[test]
    fn nothing_set_names_every_variable() {
        let error = from(&[("ANTHROPIC_API_KEY", "  ")]).unwrap_err();
        assert_eq!(error.kind(), extract_drive::ErrorKind::Configuration);
        for name in ["ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_API_KEY"] {
            assert!(error.to_string().contains(name), "{name}: {error}");
        }
    }

    #[cfg(feature = "anthropic")]
    #[test]
    fn the_anthropic_key_wins_when_both_are_set() {
        let both = [
            ("ANTHROPIC_API_KEY", "sk-ant-test"),
            ("ANTHROPIC_MODEL", "claude-sonnet-5-5"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1"),
            ("OPENAI_MODEL", "qwen3"),
        ];
        assert_eq!(from(&both).unwrap().model().name(), "claude-sonnet-5-5");
        assert_eq!(from(&[("ANTHROPIC_API_KEY", "sk-ant-test")]).unwrap().model().name(), "claude-haiku-5-5");
    }

    #[cfg(feature = "openai")]
    #[test]
    fn an_openai_compatible_server_without_a_key() {
        let local = [("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1"), ("OPENAI_MODEL", "qwen3")];
        assert_eq!(from(&local).unwrap().model().name(), "qwen3");
        // Its own errors come through: a server without a model named.
        let error = from(&[("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")]).unwrap_err();
        assert!(error.to_string().contains("OPENAI_MODEL"), "{error}");
    }

    #[cfg(not(feature = "openai"))]
    #[test]
    fn an_openai_variable_without_the_feature_says_which_to_turn_on() {
        let error = from(&[("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")]).unwrap_err();
        assert!(error.to_string().contains("feature `openai`"), "{error}");
    }
}
