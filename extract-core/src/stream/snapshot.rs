//! What a screen shows of an output while it arrives: a [`Snapshot`], and
//! the [`PathState`] of each of its paths.

use serde_json::Value;

use crate::FieldPath;

use super::reader::value_at;

/// The output of the attempt in flight, as far as it has arrived.
///
/// `json()` holds the finished values, the containers still open, and a
/// string as far as it has arrived (a number only once it is whole, so
/// `1` is never shown for what becomes `1000000`). `complete()` lists the
/// paths that are finished and pass every check and keyword that reads
/// them, each decided on finished values alone: a complete path never
/// changes or fails later in the same attempt (unless the transport sends
/// the request again, a restart, and the output starts over).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    json: Value,
    complete: Vec<FieldPath>,
}

/// Where a path of the output stands in a [`Snapshot`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PathState {
    /// Nothing of it has arrived.
    Pending,
    /// It has started (or finished) arriving, and is not yet known to pass
    /// everything that reads it.
    Incomplete,
    /// It is finished and passes every check that reads it: it will not
    /// change or fail later in this attempt.
    Complete,
}

impl Snapshot {
    /// A snapshot of the output so far (`json`) and its `complete` paths,
    /// as a driver builds it from a [`PartialJson`](super::PartialJson) and
    /// a [`Judgement`](super::Judgement).
    pub fn new(json: Value, complete: Vec<FieldPath>) -> Snapshot {
        Snapshot { json, complete }
    }

    /// The output so far, as JSON (`null` before anything arrived).
    pub fn json(&self) -> &Value {
        &self.json
    }

    /// The complete paths, in the order they finished (displayed like a
    /// violation's: `line_items[2].amount`, `invoice_number.value`).
    pub fn complete(&self) -> &[FieldPath] {
        &self.complete
    }

    /// Where `path` stands: [`Complete`](PathState::Complete) when it is
    /// among [`complete`](Snapshot::complete) or inside one of them,
    /// [`Incomplete`](PathState::Incomplete) when part of it has arrived,
    /// else [`Pending`](PathState::Pending).
    pub fn state(&self, path: &FieldPath) -> PathState {
        let segments = path.segments();
        if self.complete.iter().any(|done| segments.starts_with(done.segments())) {
            PathState::Complete
        } else if value_at(&self.json, segments).is_some_and(|v| !v.is_null() || !path.is_root()) {
            PathState::Incomplete
        } else {
            PathState::Pending
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_path_is_pending_until_it_arrives_and_complete_under_a_complete_one() {
        let items = FieldPath::root().key("items");
        let snapshot = Snapshot::new(json!({"items": [{"amount": 3}]}), vec![items.clone().index(0)]);
        assert_eq!(snapshot.state(&FieldPath::root()), PathState::Incomplete);
        assert_eq!(snapshot.state(&items), PathState::Incomplete);
        assert_eq!(snapshot.state(&items.clone().index(0).key("amount")), PathState::Complete);
        assert_eq!(snapshot.state(&items.clone().index(1)), PathState::Pending);
        assert_eq!(snapshot.state(&FieldPath::root().key("total")), PathState::Pending);
        assert_eq!(Snapshot::default().state(&FieldPath::root()), PathState::Pending);
    }
}
