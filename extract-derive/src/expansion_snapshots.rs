//! What the derive writes, shown whole for representative types, so a
//! reviewer sees the expansion without `cargo expand` and any change to it
//! shows in review (`cargo insta review` after an intended change).

use quote::quote;

/// The derive's output for `input`, pretty-printed.
fn expanded(input: proc_macro2::TokenStream) -> String {
    let input: syn::DeriveInput = syn::parse2(input).expect("a type definition");
    let output = crate::expand(&input);
    let file: syn::File = syn::parse2(output.clone()).unwrap_or_else(|e| panic!("{e}: {output}"));
    // The encoded descriptions hold control characters: show them escaped.
    prettyplease::unparse(&file)
        .replace('\u{1}', "\\u{1}")
        .replace('\u{2}', "\\u{2}")
        .replace('\u{3}', "\\u{3}")
        .replace('\u{4}', "\\u{4}")
}

#[test]
fn checks_over_nested_collections() {
    insta::assert_snapshot!(expanded(quote! {
        /// Record one invoice.
        #[check(sum(line_items.amount) == stated_total, tolerance = 0.01)]
        #[check(count(line_items) >= 1, message = "an invoice lists {line_items}")]
        struct Invoice {
            invoice_number: String,
            line_items: Vec<LineItem>,
            #[serde(rename = "total")]
            stated_total: f64,
        }
    }));
}

#[test]
fn sourced_values_and_tags() {
    insta::assert_snapshot!(expanded(quote! {
        #[extract(name = "record_vendor")]
        #[check(is_some(vat_id) || country == "US", code = "vat_id_needed", recoverable = false)]
        struct Vendor {
            #[extract(recoverable = false)]
            name: Sourced<String>,
            vat_id: Option<Sourced<String>>,
            country: String,
        }
    }));
}

#[test]
fn maps_options_and_aliases() {
    insta::assert_snapshot!(expanded(quote! {
        #[serde(rename_all = "camelCase")]
        struct Ledger {
            by_account: BTreeMap<String, Vec<Entry>>,
            opening_balance: Option<f64>,
            pair: (Entry, u32),
            aliased: Entries,
            #[serde(default)]
            notes: Option<String>,
        }
    }));
}

#[test]
fn an_enum_with_checks_in_a_variant() {
    insta::assert_snapshot!(expanded(quote! {
        /// How it was paid.
        #[serde(tag = "t", content = "c", rename_all = "snake_case")]
        enum Payment {
            #[check(len(last4) == 4)]
            Card {
                #[extract(recoverable = false)]
                last4: String,
                lines: Vec<Line>,
            },
            BankTransfer(Iban, f64),
            Cash,
        }
    }));
}

#[test]
fn a_newtype_with_a_with_check() {
    insta::assert_snapshot!(expanded(quote! {
        #[check(with = iban_is_valid)]
        struct Iban(String);
    }));
}

#[test]
fn a_generic_struct() {
    insta::assert_snapshot!(expanded(quote! {
        #[check(count(items) >= 1)]
        struct Page<T> {
            items: Vec<T>,
            page: u32,
        }
    }));
}
