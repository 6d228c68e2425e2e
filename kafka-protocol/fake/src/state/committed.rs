//! A committed offset, as a group keeps it and as a transaction holds it
//! until it commits.

/// A committed offset: offset, leader epoch, metadata.
pub type Committed = (i64, i32, Option<String>);
