//! The SQL files beside this one, embedded in the binary in order: one
//! pair per schema version, `NNNN_name.sqlite.sql` and
//! `NNNN_name.postgres.sql`, the two engines' text of one change.

/// Lists each pair once, by its file stem, so neither engine can gain a
/// version the other lacks.
macro_rules! migrations {
    ($($stem:literal),* $(,)?) => {
        /// The file stem of each version (`0001_initial`), in order; the
        /// tests check the numbers and that no file is left out.
        #[cfg(test)]
        pub(crate) const STEMS: &[&str] = &[$($stem),*];
        /// SQLite's text of each version, in order.
        pub(crate) const SQLITE: &[&str] = &[$(include_str!(concat!($stem, ".sqlite.sql"))),*];
        /// PostgreSQL's text of each version, in order.
        pub(crate) const POSTGRES: &[&str] =
            &[$(include_str!(concat!($stem, ".postgres.sql"))),*];
    };
}

migrations![
    "0001_initial",
    "0002_packing",
    "0003_registers",
    "0004_changes",
    "0005_definition_content",
    "0006_authors",
    "0007_live_bytes",
    "0008_generations",
    "0009_hiera_version",
    "0010_scope_generations",
];
