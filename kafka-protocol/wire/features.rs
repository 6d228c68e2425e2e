//! The features of kafka-wire that are not an API's: one home for the build
//! script, which takes any other feature that is on for an API's, and for
//! `tests/features.rs`, which checks that `Cargo.toml` declares these and
//! exactly one feature per API of `messages/` besides.

/// kafka-wire's features that are not one API's, as `Cargo.toml` spells
/// them. (`all-apis`, `client-apis` and `controller-apis` enable the
/// features of their APIs.)
pub const NOT_APIS: &[&str] = &[
    "default",
    "all-apis",
    "client-apis",
    "controller-apis",
    "metadata-records",
    "json",
    "precompile",
    "tokio",
    "regenerate",
];
