//! Two configurations side by side on the same cases: paired counts and a
//! 95% interval on the difference of accuracy (paired bootstrap).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Scorecard, Verdict};
use crate::Error;

/// Resamples of the bootstrap: enough that the interval's ends move by
/// less than a tenth of a point between seeds on a corpus of 60.
const RESAMPLES: usize = 10_000;

/// The fixed seed, so that the same two scorecards always give the same interval.
const SEED: u64 = 0x0045_5854_5241_4354;

/// B against A on the same cases, per field and per document.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Comparison {
    /// A's label.
    pub a: String,
    /// B's label.
    pub b: String,
    /// The number of cases both scored.
    pub cases: usize,
    /// Documents: right means valid and every field right, or rightly escalated.
    pub documents: Paired,
    /// Each field, by JSON path (the fields both scorecards have).
    pub fields: BTreeMap<String, Paired>,
}

/// One measure compared: how many cases B got right that A did not
/// (`better`), the reverse (`worse`), the rest (`same`), each side's
/// accuracy, and B's minus A's with its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Paired {
    /// Cases B got right and A did not.
    pub better: usize,
    /// Cases A got right and B did not.
    pub worse: usize,
    /// Cases both got right, or both wrong.
    pub same: usize,
    /// A's accuracy ([`Verdict::is_right`] over the cases).
    pub accuracy_a: f64,
    /// B's accuracy.
    pub accuracy_b: f64,
    /// `accuracy_b - accuracy_a`.
    pub difference: f64,
    /// The 95% interval of the difference: the 2.5th and 97.5th percentiles
    /// of a paired bootstrap (10,000 resamples of the cases, fixed seed).
    pub interval: [f64; 2],
}

impl Paired {
    /// Whether the interval leaves out zero: B is better (or worse) beyond
    /// what the sample's noise explains, at the 95% level.
    pub fn is_clear(&self) -> bool {
        self.interval[0] > 0.0 || self.interval[1] < 0.0
    }

    fn of(pairs: &[(bool, bool)]) -> Paired {
        let better = pairs.iter().filter(|(a, b)| *b && !*a).count();
        let worse = pairs.iter().filter(|(a, b)| *a && !*b).count();
        let n = pairs.len().max(1) as f64;
        let accuracy_a = pairs.iter().filter(|(a, _)| *a).count() as f64 / n;
        let accuracy_b = pairs.iter().filter(|(_, b)| *b).count() as f64 / n;
        Paired {
            better,
            worse,
            same: pairs.len() - better - worse,
            accuracy_a,
            accuracy_b,
            difference: accuracy_b - accuracy_a,
            interval: bootstrap(pairs),
        }
    }
}

/// The 2.5th and 97.5th percentiles of the difference of accuracy over
/// resamples of the pairs (drawn with replacement, as pairs).
fn bootstrap(pairs: &[(bool, bool)]) -> [f64; 2] {
    if pairs.is_empty() {
        return [0.0, 0.0];
    }
    // Each pair contributes -1, 0 or +1 to B's lead.
    let lead: Vec<i64> = pairs.iter().map(|(a, b)| i64::from(*b) - i64::from(*a)).collect();
    let n = lead.len();
    let mut random = SplitMix(SEED);
    let mut differences: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let sum: i64 = (0..n).map(|_| lead[random.below(n)]).sum();
            sum as f64 / n as f64
        })
        .collect();
    differences.sort_by(f64::total_cmp);
    let at = |q: f64| differences[((RESAMPLES as f64 - 1.0) * q).round() as usize];
    [at(0.025), at(0.975)]
}

/// SplitMix64: a few lines of a well-known generator, enough for a seeded
/// bootstrap (a dependency on `rand` for one loop would weigh more).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0); the bias of the modulo is below 2^-40
    /// for any corpus size that fits in memory.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

impl Comparison {
    /// Compares `b` with `a`, case by case (paired by document id). `Err`
    /// (configuration) when they did not score the same cases.
    pub fn new(a: &Scorecard, b: &Scorecard) -> Result<Comparison, Error> {
        let by_id: BTreeMap<&str, &super::CaseScore> = b.cases.iter().map(|c| (c.id.as_str(), c)).collect();
        let mut pairs = Vec::with_capacity(a.cases.len());
        for case in &a.cases {
            let Some(other) = by_id.get(case.id.as_str()) else {
                return Err(Error::config(format!(
                    "comparing `{}` with `{}`: case {} was scored by the first only; run both on the same cases",
                    a.label, b.label, case.id
                )));
            };
            pairs.push((case, *other));
        }
        if pairs.len() != b.cases.len() {
            return Err(Error::config(format!(
                "comparing `{}` with `{}`: the second scored {} cases the first did not; run both on the same cases",
                a.label,
                b.label,
                b.cases.len() - pairs.len()
            )));
        }
        let documents = Paired::of(
            &pairs.iter().map(|(x, y)| (x.verdict.is_right(), y.verdict.is_right())).collect::<Vec<_>>(),
        );
        let mut fields = BTreeMap::new();
        for field in a.fields.keys().filter(|f| b.fields.contains_key(*f)) {
            let right = |v: Option<&Verdict>| v.is_some_and(|v| v.is_right());
            let field_pairs: Vec<(bool, bool)> =
                pairs.iter().map(|(x, y)| (right(x.fields.get(field)), right(y.fields.get(field)))).collect();
            fields.insert(field.clone(), Paired::of(&field_pairs));
        }
        Ok(Comparison { a: a.label.clone(), b: b.label.clone(), cases: pairs.len(), documents, fields })
    }
}

fn points(share: f64) -> String {
    format!("{:+.1}", share * 100.0)
}

impl fmt::Display for Comparison {
    /// A text table: one row for the documents, one per field.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "B = {} against A = {}, on {} cases (accuracy in %, difference in points)",
            self.b, self.a, self.cases
        )?;
        let width = self.fields.keys().map(String::len).max().unwrap_or(0).max("documents".len());
        writeln!(
            f,
            "{:<width$}  {:>6}  {:>6}  {:>6}  {:>6}  {:>6}  {:>6}  {:>17}",
            "", "A", "B", "B - A", "better", "worse", "same", "95% interval"
        )?;
        let row = |f: &mut fmt::Formatter<'_>, name: &str, p: &Paired| {
            writeln!(
                f,
                "{:<width$}  {:>6.1}  {:>6.1}  {:>6}  {:>6}  {:>6}  {:>6}  {:>17}{}",
                name,
                p.accuracy_a * 100.0,
                p.accuracy_b * 100.0,
                points(p.difference),
                p.better,
                p.worse,
                p.same,
                format!("[{}, {}]", points(p.interval[0]), points(p.interval[1])),
                if p.is_clear() { "  *" } else { "" },
            )
        };
        row(f, "documents", &self.documents)?;
        for (name, paired) in &self.fields {
            row(f, name, paired)?;
        }
        f.write_str("* the interval leaves out zero\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_holds_a_known_difference_and_leaves_out_zero() {
        // 60 cases: B fixes 15 that A gets wrong, breaks none.
        let pairs: Vec<(bool, bool)> = (0..60).map(|i| (i >= 15, true)).collect();
        let paired = Paired::of(&pairs);
        assert_eq!((paired.better, paired.worse, paired.same), (15, 0, 45));
        assert!((paired.difference - 0.25).abs() < 1e-12);
        let [low, high] = paired.interval;
        assert!(low > 0.1 && low < 0.25 && high > 0.25 && high < 0.4, "{low} {high}");
        assert!(paired.is_clear());
        // The same seed, the same interval.
        assert_eq!(Paired::of(&pairs).interval, paired.interval);
    }

    #[test]
    fn no_difference_gives_an_interval_around_zero() {
        // B fixes 3 and breaks 3 of 60.
        let pairs: Vec<(bool, bool)> = (0..60).map(|i| (i % 20 != 0, i % 20 != 1)).collect();
        let paired = Paired::of(&pairs);
        assert_eq!((paired.better, paired.worse), (3, 3));
        assert_eq!(paired.difference, 0.0);
        assert!(paired.interval[0] < 0.0 && paired.interval[1] > 0.0, "{:?}", paired.interval);
        assert!(!paired.is_clear());
    }
}
