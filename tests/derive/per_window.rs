//! `#[extract(per_window)]`: a list gathered window by window, whose items'
//! first `Sourced` field anchors them; the runtime's description names the
//! list and its anchor. What the attribute refuses is in `tests/ui/per_window_*.rs`.

use extract::{Extractable, Sourced};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
#[check(sum(transactions.amount) == closing_balance - opening_balance, tolerance = 0.005)]
struct Statement {
    opening_balance: f64,
    closing_balance: f64,
    #[extract(per_window)]
    transactions: Vec<Transaction>,
    fees: Vec<Transaction>,
}

#[derive(Debug, Deserialize, JsonSchema, Extractable)]
struct Transaction {
    amount: f64,
    #[serde(rename = "line")]
    booked: Sourced<String>,
    memo: Sourced<String>,
}

#[test]
fn the_description_names_each_list_gathered_per_window_and_its_anchor() {
    let info = <Statement as extract::__private_v2::Audited>::TYPE_INFO.unwrap();
    let lists: Vec<(&str, &str)> =
        info.per_window().iter().map(|(field, anchor)| (field.json_name, *anchor)).collect();
    // The first `Sourced` field in declaration order, by its JSON name.
    assert_eq!(lists, [("transactions", "line")]);
    // The tool is unchanged by the attribute.
    assert!(Statement::tool().input_schema["properties"]["transactions"].is_object());
}
