//! The journal's schema, as numbered migration files per database, read in
//! at build time. A new journal applies every one in order; an older one
//! applies those it lacks, in one transaction. A later version of extract
//! adds a file and never edits one: a journal on disk is the record of the
//! files it ran.

/// One migration: its number (1, 2, ...), its file's name and its SQL.
pub(crate) struct Migration {
    pub number: u32,
    pub name: &'static str,
    pub sql: &'static str,
}

/// The migrations of one database, from the files `migrations/<dir>/<name>.sql`.
macro_rules! migrations {
    ($dir:literal: $($number:literal $name:literal),+ $(,)?) => {
        &[$(Migration {
            number: $number,
            name: $name,
            sql: include_str!(concat!("migrations/", $dir, "/", $name, ".sql")),
        }),+]
    };
}

/// SQLite's: the database's `user_version` is the number of the last one applied.
#[cfg(feature = "sqlite")]
pub(crate) const SQLITE: &[Migration] = migrations!("sqlite":
    1 "0001_journal",
    2 "0002_reviewers",
    3 "0003_one_vocabulary",
);

/// PostgreSQL's: the table `extract_schema` holds the numbers applied.
#[cfg(feature = "postgres")]
pub(crate) const POSTGRES: &[Migration] = migrations!("postgres":
    1 "0001_journal",
    2 "0002_one_vocabulary",
);

/// The number of the newest migration of `migrations`.
pub(crate) const fn newest(migrations: &[Migration]) -> u32 {
    match migrations.last() {
        Some(migration) => migration.number,
        None => 0,
    }
}

/// The migrations a journal at `version` lacks, in order.
pub(crate) fn after(
    migrations: &'static [Migration],
    version: u32,
) -> impl Iterator<Item = &'static Migration> {
    migrations.iter().filter(move |m| m.number > version)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered_in_order(migrations: &[Migration]) {
        for (i, migration) in migrations.iter().enumerate() {
            assert_eq!(migration.number as usize, i + 1, "{}", migration.name);
            let prefix = format!("{:04}_", migration.number);
            assert!(migration.name.starts_with(&prefix), "{} is not named {prefix}...", migration.name);
            assert!(!migration.sql.trim().is_empty(), "{} is empty", migration.name);
        }
    }

    #[test]
    fn migrations_are_numbered_from_one_without_gaps_and_named_by_their_number() {
        #[cfg(feature = "sqlite")]
        numbered_in_order(SQLITE);
        #[cfg(feature = "postgres")]
        numbered_in_order(POSTGRES);
        numbered_in_order(&[]);
    }
}
