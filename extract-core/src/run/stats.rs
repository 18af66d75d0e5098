//! Aggregates across many documents: [`Stats`].

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Serialize;
use serde::ser::{SerializeMap, SerializeStruct, Serializer};

use super::hint;
use super::outcome::FailedAttempt;
use crate::{Fingerprint, Outcome, Reason, Usage, Violation};

/// Folds many outcomes: success within budget, attempts, escalations by
/// reason, and violations by fingerprint (indices normalised, so
/// `line_items[3].amount` and `line_items[7].amount` count together).
///
/// When one fingerprint accounts for at least half of the failed attempts
/// (the threshold is configurable) it reports it with its structural fix,
/// because raising the retry budget is the wrong fix for a systematic error.
/// `Display` is a terminal table; `Serialize` gives the same as JSON.
///
/// ```
/// use extract::{Extractor, Retries, Stats, Tool, Violations};
/// use extract::testing::Scripted;
/// use serde_json::json;
///
/// let tool = Tool {
///     name: "record_total".into(),
///     description: "Record the total.".into(),
///     input_schema: json!({"type": "object"}),
///     strict: false,
/// };
/// let mut stats = Stats::new();
/// for reply in [json!({"total": 1}), json!({})] {
///     let extractor = Extractor::new(Scripted::new([reply.clone(), reply])).retries(Retries::new(1)?);
///     let outcome = extractor
///         .extract_with_blocking(tool.clone(), "Total: 1", |output: &serde_json::Value, _doc: &str| {
///             output["total"].as_f64().ok_or_else(|| {
///                 let at = extract::FieldPath::root().key("total");
///                 let v = extract::Violation::new(extract::Layer::Structure, extract::Code::MISSING_FIELD, at, "missing");
///                 Violations::one(v)
///             })
///         })?;
///     stats.record(&outcome);
/// }
/// assert_eq!(stats.extractions(), 2);
/// assert_eq!(stats.valid(), 1);
/// let dominant = stats.dominant().unwrap();
/// assert_eq!(dominant.fingerprint.path, "total");
/// assert!(dominant.fix.contains("optional"));
/// println!("{stats}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Stats {
    threshold: f64,
    extractions: u64,
    valid: u64,
    first_attempt_valid: u64,
    reviewed: u64,
    attempts: BTreeMap<u32, u64>,
    escalations: BTreeMap<Reason, u64>,
    failed_attempts: u64,
    violations: BTreeMap<Fingerprint, u64>,
    usage: Usage,
    usage_by_attempt: BTreeMap<u32, Usage>,
    /// The summed cost of the outcomes that had one, and how many had none.
    cost: f64,
    unpriced: u64,
    /// Outcomes by the rung of the ladder of models that settled them.
    rungs: BTreeMap<u32, u64>,
    /// What each model (by name) answered, spent and settled.
    models: BTreeMap<String, ModelSpend>,
}

/// What one model of a run answered, spent and settled ([`Stats::by_model`]):
/// in a ladder of models, what each rung cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ModelSpend {
    /// The attempts it answered.
    pub attempts: u64,
    /// The tokens those attempts spent.
    pub usage: Usage,
    /// What those attempts cost in US dollars, over those with a price.
    pub cost: f64,
    /// The attempts without a price (their model is not in the price table).
    pub unpriced: u64,
    /// The outcomes whose last answer was its (valid or escalated).
    pub settled: u64,
}

/// One attempt's model and spend, as [`Facts`] keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Spend {
    /// The model that answered (`Model::name`).
    pub model: String,
    /// The tokens the attempt spent.
    pub usage: Usage,
    /// What it cost in US dollars; `None` without a price.
    pub cost: Option<f64>,
}

/// What [`Stats`] counts of one outcome: enough to count it again without
/// the outcome (a journal stores it beside the outcome's packet).
#[derive(Debug, Clone, PartialEq)]
pub struct Facts {
    /// Attempts made.
    pub attempts: u32,
    /// Tokens spent over every attempt.
    pub usage: Usage,
    /// `None` for a valid outcome.
    pub reason: Option<Reason>,
    /// Whether a reviewer fixed the output.
    pub reviewed: bool,
    /// The usage of each attempt, by attempt number.
    pub attempt_usage: Vec<(u32, Usage)>,
    /// The fingerprints of each failed attempt, oldest first.
    pub failed: Vec<BTreeSet<Fingerprint>>,
    /// What every attempt cost in US dollars; `None` when the model has no price.
    pub cost: Option<f64>,
    /// The rung of the ladder of models that settled it (0: the first model).
    pub rung: u32,
    /// Each attempt whose model is known, oldest first; the last settled it.
    pub spend: Vec<Spend>,
}

impl Facts {
    /// The facts of `outcome`.
    pub fn of<T>(outcome: &Outcome<T>) -> Facts {
        let prints =
            |attempt: &FailedAttempt| attempt.violations.iter().map(Violation::fingerprint).collect();
        match outcome {
            Outcome::Valid(v) => Facts {
                attempts: v.attempts(),
                usage: v.usage(),
                reason: None,
                reviewed: v.reviewed(),
                attempt_usage: (1..).zip(v.attempt_usage().iter().copied()).collect(),
                failed: v.failed_attempts().iter().map(prints).collect(),
                cost: v.cost(),
                rung: v.rung(),
                spend: spend(
                    v.failed_attempts(),
                    v.model(),
                    v.attempt_usage().last().copied().unwrap_or_default(),
                    v.cost(),
                ),
            },
            Outcome::Escalated(e) => Facts {
                attempts: e.attempts(),
                usage: e.usage,
                reason: Some(e.reason),
                reviewed: false,
                attempt_usage: e.error_chain.iter().map(|a| (a.attempt, a.usage)).collect(),
                failed: e.error_chain.iter().map(prints).collect(),
                cost: e.cost,
                rung: e.rung,
                spend: spend(&e.error_chain, None, Usage::default(), None),
            },
        }
    }
}

/// The spend of each attempt whose model is known: the failed ones, then
/// (for a valid outcome) the last, answered by `last_model`, whose cost is
/// what the outcome's `total` leaves.
fn spend(
    failed: &[FailedAttempt],
    last_model: Option<&str>,
    last_usage: Usage,
    total: Option<f64>,
) -> Vec<Spend> {
    let mut spend: Vec<Spend> = failed
        .iter()
        .filter_map(|a| Some(Spend { model: a.model.clone()?, usage: a.usage, cost: a.cost }))
        .collect();
    if let Some(model) = last_model {
        let failed_cost = failed.iter().map(|a| a.cost).sum::<Option<f64>>();
        let cost = total.zip(failed_cost).map(|(total, failed)| (total - failed).max(0.0));
        spend.push(Spend { model: model.to_string(), usage: last_usage, cost });
    }
    spend
}

/// The fingerprint behind most failures, with what would fix it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dominant {
    /// The fingerprint (layer, code, normalised path, check).
    pub fingerprint: Fingerprint,
    /// The number of failed attempts it appeared in.
    pub count: u64,
    /// Its share of all failed attempts, between 0 and 1.
    pub share: f64,
    /// The structural fix (not "raise retries").
    pub fix: String,
}

impl Default for Stats {
    fn default() -> Stats {
        Stats::new()
    }
}

impl Stats {
    /// The default share above which one fingerprint is called dominant: one half.
    pub const DEFAULT_THRESHOLD: f64 = 0.5;

    /// Empty statistics with the default threshold.
    pub fn new() -> Stats {
        Stats {
            threshold: Stats::DEFAULT_THRESHOLD,
            extractions: 0,
            valid: 0,
            first_attempt_valid: 0,
            reviewed: 0,
            attempts: BTreeMap::new(),
            escalations: BTreeMap::new(),
            failed_attempts: 0,
            violations: BTreeMap::new(),
            usage: Usage::default(),
            usage_by_attempt: BTreeMap::new(),
            cost: 0.0,
            unpriced: 0,
            rungs: BTreeMap::new(),
            models: BTreeMap::new(),
        }
    }

    /// The share of failed attempts (between 0 and 1) at or above which one
    /// fingerprint is reported as dominant.
    pub fn dominance_threshold(mut self, share: f64) -> Stats {
        self.threshold = if share.is_nan() { Stats::DEFAULT_THRESHOLD } else { share.clamp(0.0, 1.0) };
        self
    }

    /// Adds one outcome.
    pub fn record<T>(&mut self, outcome: &Outcome<T>) {
        self.record_facts(&Facts::of(outcome));
    }

    /// Adds one outcome, from what [`record`](Stats::record) reads of it
    /// (an outcome read back from a journal).
    pub fn record_facts(&mut self, facts: &Facts) {
        self.extractions += 1;
        *self.attempts.entry(facts.attempts).or_default() += 1;
        self.usage += facts.usage;
        match facts.cost {
            Some(cost) => self.cost += cost,
            None => self.unpriced += 1,
        }
        *self.rungs.entry(facts.rung).or_default() += 1;
        for spend in &facts.spend {
            let model = self.models.entry(spend.model.clone()).or_default();
            model.attempts += 1;
            model.usage += spend.usage;
            match spend.cost {
                Some(cost) => model.cost += cost,
                None => model.unpriced += 1,
            }
        }
        if let Some(last) = facts.spend.last() {
            self.models.entry(last.model.clone()).or_default().settled += 1;
        }
        match facts.reason {
            None => {
                self.valid += 1;
                if facts.reviewed {
                    self.reviewed += 1;
                }
                if facts.attempts == 1 {
                    self.first_attempt_valid += 1;
                }
            }
            Some(reason) => *self.escalations.entry(reason).or_default() += 1,
        }
        for (attempt, usage) in &facts.attempt_usage {
            *self.usage_by_attempt.entry(*attempt).or_default() += *usage;
        }
        for fingerprints in &facts.failed {
            self.failed_attempts += 1;
            for fingerprint in fingerprints {
                *self.violations.entry(fingerprint.clone()).or_default() += 1;
            }
        }
    }

    /// The number of outcomes recorded.
    pub fn extractions(&self) -> u64 {
        self.extractions
    }

    /// The number of valid outcomes (every one within the retry budget).
    pub fn valid(&self) -> u64 {
        self.valid
    }

    /// The number of valid outcomes on the first attempt.
    pub fn first_attempt_valid(&self) -> u64 {
        self.first_attempt_valid
    }

    /// The number of escalations.
    pub fn escalated(&self) -> u64 {
        self.extractions - self.valid
    }

    /// Valid outcomes over all outcomes (0 when there are none).
    pub fn success_rate(&self) -> f64 {
        if self.extractions == 0 { 0.0 } else { self.valid as f64 / self.extractions as f64 }
    }

    /// How many outcomes took each number of attempts.
    pub fn attempts_histogram(&self) -> &BTreeMap<u32, u64> {
        &self.attempts
    }

    /// The number of escalations for `reason`.
    pub fn escalations(&self, reason: Reason) -> u64 {
        self.escalations.get(&reason).copied().unwrap_or(0)
    }

    /// The number of failed attempts, over every outcome (valid ones included).
    pub fn failed_attempts(&self) -> u64 {
        self.failed_attempts
    }

    /// Each fingerprint with the number of failed attempts it appeared in,
    /// most frequent first.
    pub fn violations(&self) -> Vec<(&Fingerprint, u64)> {
        let mut all: Vec<(&Fingerprint, u64)> = self.violations.iter().map(|(f, n)| (f, *n)).collect();
        all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        all
    }

    /// Tokens spent over every outcome.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// What every outcome cost in US dollars; `None` when any outcome's
    /// model had no price (a sum without them would understate the run).
    /// [`priced_cost`](Stats::priced_cost) sums those that had one.
    pub fn cost(&self) -> Option<f64> {
        (self.unpriced == 0).then_some(self.cost)
    }

    /// The share of all input tokens (uncached, cache reads, cache writes)
    /// that was read from the prompt cache, between 0 and 1 (0 without input).
    pub fn cache_read_share(&self) -> f64 {
        let u = self.usage;
        let input = u.input_tokens.saturating_add(u.cache_read_tokens).saturating_add(u.cache_write_tokens);
        if input == 0 { 0.0 } else { u.cache_read_tokens as f64 / input as f64 }
    }

    /// Outcomes by the rung of the ladder of models that settled them (0:
    /// the first model): how often a stronger model was needed.
    pub fn settled_by_rung(&self) -> &BTreeMap<u32, u64> {
        &self.rungs
    }

    /// What each model answered, spent and settled, by `Model::name` (empty
    /// when no outcome named its model): in a ladder, the cost of each rung.
    pub fn by_model(&self) -> &BTreeMap<String, ModelSpend> {
        &self.models
    }

    /// What the outcomes whose model had a price cost, in US dollars, and
    /// how many outcomes had none.
    pub fn priced_cost(&self) -> (f64, u64) {
        (self.cost, self.unpriced)
    }

    /// Tokens spent by each attempt number over every outcome: under `1`
    /// every first attempt, under `2` every first correction, and so on.
    /// Read from each valid outcome's [`attempt_usage`](crate::Validated::attempt_usage)
    /// and each escalation's `error_chain`, so for outcomes a [`Run`](crate::Run)
    /// built the values add up to [`usage`](Stats::usage); an escalation
    /// built elsewhere whose `usage` is not the sum of its chain makes
    /// them differ.
    pub fn usage_by_attempt(&self) -> &BTreeMap<u32, Usage> {
        &self.usage_by_attempt
    }

    /// Valid outcomes a human's fix made valid ([`review`](fn@crate::review)).
    pub fn reviewed(&self) -> u64 {
        self.reviewed
    }

    /// The number of valid outcomes that needed at least one correction.
    pub fn valid_after_retry(&self) -> u64 {
        self.valid - self.first_attempt_valid
    }

    /// [`violations`](Stats::violations) as a Pareto table: each fingerprint
    /// with its count, its share of the failed attempts, and the cumulative
    /// share of all fingerprint occurrences up to and including it (which
    /// ends at 1; an attempt with two fingerprints counts in both).
    pub fn pareto(&self) -> Vec<ParetoRow<'_>> {
        let violations = self.violations();
        let occurrences: u64 = violations.iter().map(|(_, n)| n).sum();
        let mut running = 0;
        violations
            .into_iter()
            .map(|(fingerprint, count)| {
                running += count;
                ParetoRow { fingerprint, count, running, occurrences }
            })
            .collect()
    }

    /// The fingerprint that accounts for at least the threshold's share of the
    /// failed attempts, with its structural fix; `None` when no failure
    /// dominates, including when two fingerprints tie for the most.
    pub fn dominant(&self) -> Option<Dominant> {
        if self.failed_attempts == 0 {
            return None;
        }
        let mut ranked = self.violations().into_iter();
        let (fingerprint, count) = ranked.next()?;
        if ranked.next().is_some_and(|(_, runner_up)| runner_up == count) {
            return None;
        }
        let share = count as f64 / self.failed_attempts as f64;
        (share >= self.threshold).then(|| Dominant {
            fingerprint: fingerprint.clone(),
            count,
            share,
            fix: format!(
                "{}. Raising the retry budget will not fix a systematic error.",
                hint::systematic(fingerprint)
            ),
        })
    }
}

/// One row of [`Stats::pareto`].
pub struct ParetoRow<'a> {
    /// The kind of failure.
    pub fingerprint: &'a Fingerprint,
    /// How many times it occurred.
    pub count: u64,
    /// The counts of this row and every row before it.
    pub running: u64,
    /// The counts of every row.
    pub occurrences: u64,
}

/// `part` as a percentage of `whole` with one decimal (`"-"` when `whole` is
/// 0): the one format the text table and the HTML report share.
pub fn percent(part: u64, whole: u64) -> String {
    if whole == 0 { "-".to_string() } else { format!("{:.1}%", 100.0 * part as f64 / whole as f64) }
}

impl fmt::Display for Stats {
    /// The figures of the HTML report (`extract::report::Report`), as a terminal table:
    /// outcomes by status and reason, the attempts histogram, the Pareto
    /// table of fingerprints (count, share of failed attempts, cumulative
    /// share of all fingerprint occurrences), tokens in total and by attempt,
    /// and the dominant failure with its fix.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.extractions;
        writeln!(f, "{:<28}{:>8}", "extractions", n)?;
        writeln!(f, "{:<28}{:>8}  {:>6}", "valid within budget", self.valid, percent(self.valid, n))?;
        let first = self.first_attempt_valid;
        writeln!(f, "{:<28}{:>8}  {:>6}", "  on the first attempt", first, percent(first, n))?;
        let retried = self.valid_after_retry();
        writeln!(f, "{:<28}{:>8}  {:>6}", "  after a correction", retried, percent(retried, n))?;
        if self.reviewed > 0 {
            writeln!(
                f,
                "{:<28}{:>8}  {:>6}",
                "  of them, reviewed",
                self.reviewed,
                percent(self.reviewed, n)
            )?;
        }
        writeln!(f, "{:<28}{:>8}  {:>6}", "escalated", self.escalated(), percent(self.escalated(), n))?;
        for reason in Reason::ALL {
            let count = self.escalations(reason);
            writeln!(f, "{:<28}{:>8}  {:>6}", format!("  {reason}"), count, percent(count, n))?;
        }
        writeln!(f)?;
        writeln!(f, "{:<28}{:>8}", "attempts", "outcomes")?;
        for (attempts, count) in &self.attempts {
            writeln!(f, "{:<28}{:>8}  {:>6}", format!("  {attempts}"), count, percent(*count, n))?;
        }
        writeln!(f)?;
        writeln!(f, "{:<28}{:>8}", "failed attempts", self.failed_attempts)?;
        let pareto = self.pareto();
        if !pareto.is_empty() {
            writeln!(f, "{:>8}  {:>6}  {:>6}  fingerprint", "attempts", "share", "cumul.")?;
            for row in pareto {
                writeln!(
                    f,
                    "{:>8}  {:>6}  {:>6}  {}",
                    row.count,
                    percent(row.count, self.failed_attempts),
                    percent(row.running, row.occurrences),
                    row.fingerprint
                )?;
            }
        }
        if self.rungs.keys().any(|rung| *rung > 0) {
            writeln!(f)?;
            writeln!(f, "{:<28}{:>8}", "settled by rung", "outcomes")?;
            for (rung, count) in &self.rungs {
                writeln!(f, "{:<28}{:>8}  {:>6}", format!("  {rung}"), count, percent(*count, n))?;
            }
        }
        if self.models.len() > 1 {
            writeln!(f)?;
            writeln!(f, "{:<28}{:>8}{:>9}{:>12}", "by model", "attempts", "settled", "cost")?;
            for (name, model) in &self.models {
                let cost = if model.unpriced == 0 { format!("${:.4}", model.cost) } else { "unknown".into() };
                writeln!(
                    f,
                    "{:<28}{:>8}{:>9}{:>12}",
                    format!("  {name}"),
                    model.attempts,
                    model.settled,
                    cost
                )?;
            }
        }
        let u = self.usage;
        writeln!(f)?;
        write!(
            f,
            "tokens: {} input, {} output, {} cache read, {} cache write",
            u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens
        )?;
        if u.cache_read_tokens > 0 {
            write!(f, " ({:.1}% of input read from the cache)", 100.0 * self.cache_read_share())?;
        }
        match (self.cost, self.unpriced) {
            (_, 0) if n > 0 => write!(f, "\ncost: ${:.4}", self.cost)?,
            (_, 0) => {}
            (cost, unpriced) if unpriced < n => write!(
                f,
                "\ncost: ${cost:.4} for the outcomes with a price; {unpriced} had none (their model is not in the price table)"
            )?,
            _ => write!(f, "\ncost: unknown (no price for the model)")?,
        }
        if !self.usage_by_attempt.is_empty() {
            write!(
                f,
                "\n{:<8}{:>10}{:>10}{:>13}{:>13}{:>10}",
                "attempt", "input", "output", "cache read", "cache write", "total"
            )?;
            for (attempt, u) in &self.usage_by_attempt {
                write!(
                    f,
                    "\n{:<8}{:>10}{:>10}{:>13}{:>13}{:>10}",
                    format!("  {attempt}"),
                    u.input_tokens,
                    u.output_tokens,
                    u.cache_read_tokens,
                    u.cache_write_tokens,
                    u.total()
                )?;
            }
        }
        if let Some(d) = self.dominant() {
            write!(
                f,
                "\n\ndominant failure: {} in {} of {} failed attempts ({:.1}%)\nfix: {}",
                d.fingerprint,
                d.count,
                self.failed_attempts,
                100.0 * d.share,
                d.fix
            )?;
        }
        Ok(())
    }
}

/// A map keyed by attempt number, with the numbers as JSON keys.
struct ByAttempt<'a, V>(&'a BTreeMap<u32, V>);

impl<V: Serialize> Serialize for ByAttempt<'_, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (attempt, value) in self.0 {
            map.serialize_entry(&attempt.to_string(), value)?;
        }
        map.end()
    }
}

struct ByReason<'a>(&'a Stats);

impl Serialize for ByReason<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(Reason::ALL.len()))?;
        for reason in Reason::ALL {
            map.serialize_entry(reason.as_str(), &self.0.escalations(reason))?;
        }
        map.end()
    }
}

#[derive(Serialize)]
struct FingerprintCount<'a> {
    fingerprint: &'a Fingerprint,
    count: u64,
    share: f64,
}

impl Serialize for Stats {
    /// `{"extractions","valid","first_attempt_valid","escalated","success_rate",
    /// "attempts":{"1":n,..},"escalations":{"not_recoverable":n,..},"failed_attempts",
    /// "violations":[{"fingerprint","count","share"}],"dominant":{..}|null,"usage",
    /// "usage_by_attempt":{"1":{..},..},"cost":usd|null,"settled_by_rung":{"0":n,..},
    /// "by_model":{"name":{"attempts","usage","cost","unpriced","settled"}},"cache_read_share"}`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let violations: Vec<FingerprintCount<'_>> = self
            .violations()
            .into_iter()
            .map(|(fingerprint, count)| FingerprintCount {
                fingerprint,
                count,
                share: count as f64 / self.failed_attempts.max(1) as f64,
            })
            .collect();
        let mut out = s.serialize_struct("Stats", 17)?;
        out.serialize_field("extractions", &self.extractions)?;
        out.serialize_field("valid", &self.valid)?;
        out.serialize_field("first_attempt_valid", &self.first_attempt_valid)?;
        out.serialize_field("reviewed", &self.reviewed)?;
        out.serialize_field("escalated", &self.escalated())?;
        out.serialize_field("success_rate", &self.success_rate())?;
        out.serialize_field("attempts", &ByAttempt(&self.attempts))?;
        out.serialize_field("escalations", &ByReason(self))?;
        out.serialize_field("failed_attempts", &self.failed_attempts)?;
        out.serialize_field("violations", &violations)?;
        out.serialize_field("dominant", &self.dominant())?;
        out.serialize_field("usage", &self.usage)?;
        out.serialize_field("usage_by_attempt", &ByAttempt(&self.usage_by_attempt))?;
        out.serialize_field("cost", &self.cost())?;
        out.serialize_field("settled_by_rung", &ByAttempt(&self.rungs))?;
        out.serialize_field("by_model", &self.models)?;
        out.serialize_field("cache_read_share", &self.cache_read_share())?;
        out.end()
    }
}
