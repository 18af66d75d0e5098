//! Names: serde's `rename_all` rules for fields, and the default tool name.

/// A serde `rename_all` rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    /// The rule serde spells `name`.
    pub fn parse(name: &str) -> Option<RenameRule> {
        Some(match name {
            "lowercase" => RenameRule::Lower,
            "UPPERCASE" => RenameRule::Upper,
            "PascalCase" => RenameRule::Pascal,
            "camelCase" => RenameRule::Camel,
            "snake_case" => RenameRule::Snake,
            "SCREAMING_SNAKE_CASE" => RenameRule::ScreamingSnake,
            "kebab-case" => RenameRule::Kebab,
            "SCREAMING-KEBAB-CASE" => RenameRule::ScreamingKebab,
            _ => return None,
        })
    }

    /// Every name `parse` accepts.
    pub const NAMES: [&'static str; 8] = [
        "lowercase",
        "UPPERCASE",
        "PascalCase",
        "camelCase",
        "snake_case",
        "SCREAMING_SNAKE_CASE",
        "kebab-case",
        "SCREAMING-KEBAB-CASE",
    ];

    /// Applies the rule to a Rust field name (snake_case), as serde does.
    pub fn apply_to_field(self, field: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => field.to_string(),
            RenameRule::Upper | RenameRule::ScreamingSnake => field.to_ascii_uppercase(),
            RenameRule::Pascal => pascal(field),
            RenameRule::Camel => {
                let pascal = pascal(field);
                let mut chars = pascal.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            }
            RenameRule::Kebab => field.replace('_', "-"),
            RenameRule::ScreamingKebab => field.replace('_', "-").to_ascii_uppercase(),
        }
    }
}

impl RenameRule {
    /// Applies the rule to a Rust variant name (PascalCase), as serde does.
    pub fn apply_to_variant(self, variant: &str) -> String {
        let snake = || {
            let mut out = String::new();
            for (i, c) in variant.char_indices() {
                if i > 0 && c.is_uppercase() {
                    out.push('_');
                }
                out.push(c.to_ascii_lowercase());
            }
            out
        };
        match self {
            RenameRule::Pascal => variant.to_string(),
            RenameRule::Lower => variant.to_ascii_lowercase(),
            RenameRule::Upper => variant.to_ascii_uppercase(),
            RenameRule::Camel => {
                let mut chars = variant.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            }
            RenameRule::Snake => snake(),
            RenameRule::ScreamingSnake => snake().to_ascii_uppercase(),
            RenameRule::Kebab => snake().replace('_', "-"),
            RenameRule::ScreamingKebab => snake().to_ascii_uppercase().replace('_', "-"),
        }
    }
}

fn pascal(field: &str) -> String {
    let mut out = String::new();
    let mut capitalize = true;
    for c in field.chars() {
        if c == '_' {
            capitalize = true;
        } else if capitalize {
            out.push(c.to_ascii_uppercase());
            capitalize = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `InvoiceLine` -> `invoice_line`, `HTTPRequest` -> `http_request`.
pub fn snake_case(type_name: &str) -> String {
    let chars: Vec<char> = type_name.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_is_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_is_lower) {
                out.push('_');
            }
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// Whether `name` is a valid Anthropic tool name: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A Rust identifier without its `r#` prefix.
pub fn unraw(ident: &syn::Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_string).unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_case_handles_acronyms_and_digits() {
        assert_eq!(snake_case("Invoice"), "invoice");
        assert_eq!(snake_case("InvoiceLine"), "invoice_line");
        assert_eq!(snake_case("HTTPRequest"), "http_request");
        assert_eq!(snake_case("Form1099Misc"), "form1099_misc");
    }

    #[test]
    fn rename_rules_match_serde() {
        assert_eq!(RenameRule::Camel.apply_to_field("stated_total"), "statedTotal");
        assert_eq!(RenameRule::Pascal.apply_to_field("stated_total"), "StatedTotal");
        assert_eq!(RenameRule::ScreamingKebab.apply_to_field("stated_total"), "STATED-TOTAL");
        assert_eq!(RenameRule::Kebab.apply_to_field("stated_total"), "stated-total");
    }

    #[test]
    fn variant_rename_rules_match_serde() {
        let cases = [
            (RenameRule::Snake, "bank_transfer"),
            (RenameRule::Camel, "bankTransfer"),
            (RenameRule::Pascal, "BankTransfer"),
            (RenameRule::Lower, "banktransfer"),
            (RenameRule::Upper, "BANKTRANSFER"),
            (RenameRule::ScreamingSnake, "BANK_TRANSFER"),
            (RenameRule::Kebab, "bank-transfer"),
            (RenameRule::ScreamingKebab, "BANK-TRANSFER"),
        ];
        for (rule, expected) in cases {
            assert_eq!(rule.apply_to_variant("BankTransfer"), expected, "{rule:?}");
        }
    }

    #[test]
    fn tool_names_are_checked() {
        assert!(is_valid_tool_name("record_invoice-2"));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name("record invoice"));
        assert!(!is_valid_tool_name(&"x".repeat(65)));
    }
}
