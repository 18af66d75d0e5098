//! The live model an example's arguments and environment ask for, shared
//! by the examples: `--backend anthropic` (the default; live with
//! `--live` or `ANTHROPIC_API_KEY`) or `--backend openai` (live with
//! `OPENAI_API_KEY` or `OPENAI_BASE_URL`; `--json-schema` for the
//! response-format mode; needs the `openai` feature). `--max-tokens N`
//! caps each answer (a small local model can ramble until its context is full).

use extract::model::Model;

/// The backend `--backend` names: `anthropic` (the default) or `openai`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Anthropic,
    OpenAi,
}

/// The backend `--backend` names; `None` when the arguments name none.
fn backend(args: &[String]) -> Result<Option<Backend>, String> {
    let mut backend = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let value = if arg == "--backend" {
            args.next().map(String::as_str)
        } else if let Some(value) = arg.strip_prefix("--backend=") {
            Some(value)
        } else {
            continue;
        };
        backend = match value {
            Some("anthropic") => Some(Backend::Anthropic),
            Some("openai") => Some(Backend::OpenAi),
            other => return Err(format!("--backend takes `anthropic` or `openai`, not {other:?}")),
        };
    }
    Ok(backend)
}

/// The `--max-tokens N` of the arguments.
fn max_tokens(args: &[String]) -> Result<Option<u32>, String> {
    match args.iter().position(|a| a == "--max-tokens").map(|i| args.get(i + 1)) {
        None => Ok(None),
        Some(Some(n)) => n.parse().map(Some).map_err(|_| format!("--max-tokens takes a number, not {n:?}")),
        Some(None) => Err("--max-tokens takes a number".into()),
    }
}

/// Whether an environment variable is set to something.
fn set(name: &str) -> bool {
    std::env::var(name).is_ok_and(|value| !value.trim().is_empty())
}

/// The live model the arguments and the environment ask for; `Ok(None)` offline.
pub fn live_model(args: &[String], example: &str) -> Result<Option<Box<dyn Model>>, String> {
    let flag = args.iter().any(|arg| arg == "--live");
    let chosen = backend(args)?;
    let configured = set("ANTHROPIC_API_KEY") || set("OPENAI_BASE_URL") || set("OPENAI_API_KEY");
    if chosen.is_none() && configured && max_tokens(args)?.is_none() {
        // No backend named: the one the environment names, as a program of yours would pick it.
        use extract::Extractor;
        use extract::model::FromEnv;
        let model = Extractor::<Box<dyn Model>>::from_env().map_err(|e| e.to_string())?.into_model();
        println!("mode: live, against {} (Extractor::from_env)", model.name());
        return Ok(Some(model));
    }
    match chosen.unwrap_or(Backend::Anthropic) {
        Backend::Anthropic if flag || set("ANTHROPIC_API_KEY") => {
            let mut client = extract::anthropic::Client::from_env().map_err(|e| e.to_string())?;
            if let Some(cap) = max_tokens(args)? {
                // The same settings, with the cap: the builder over what from_env read.
                let key = std::env::var("ANTHROPIC_API_KEY").unwrap_or_default();
                client = extract::anthropic::Client::builder()
                    .api_key(key)
                    .base_url(client.base_url())
                    .model(client.model())
                    .max_tokens(cap)
                    .build()
                    .map_err(|e| e.to_string())?;
            }
            println!("mode: live, against Claude ({} at {})", client.model(), client.base_url());
            Ok(Some(Box::new(client)))
        }
        Backend::Anthropic => {
            println!(
                "mode: offline, with a scripted model (set ANTHROPIC_API_KEY or pass --live for Claude)"
            );
            Ok(None)
        }
        Backend::OpenAi => {
            openai_model(args, example, flag || set("OPENAI_API_KEY") || set("OPENAI_BASE_URL"))
        }
    }
}

#[cfg(feature = "openai")]
fn openai_model(args: &[String], _example: &str, live: bool) -> Result<Option<Box<dyn Model>>, String> {
    use extract::openai::{ClientBuilder, Mode};
    if !live {
        println!(
            "mode: offline, with a scripted model (set OPENAI_BASE_URL and OPENAI_MODEL, or OPENAI_API_KEY, \
             for a live Chat Completions server)"
        );
        return Ok(None);
    }
    let mode = if args.iter().any(|arg| arg == "--json-schema") { Mode::JsonSchema } else { Mode::Tool };
    let mut builder = ClientBuilder::from_env().map_err(|e| e.to_string())?.mode(mode);
    if let Some(cap) = max_tokens(args)? {
        builder = builder.max_tokens(cap);
    }
    let client = builder.build().map_err(|e| e.to_string())?;
    println!(
        "mode: live, against {} at {} (Chat Completions, {mode:?} mode, strict {})",
        client.model(),
        client.base_url(),
        client.strict()
    );
    Ok(Some(Box::new(client)))
}

#[cfg(not(feature = "openai"))]
fn openai_model(_: &[String], example: &str, _: bool) -> Result<Option<Box<dyn Model>>, String> {
    Err(format!(
        "the openai backend needs the `openai` feature: \
         cargo run --example {example} --features openai -- --backend openai"
    ))
}
