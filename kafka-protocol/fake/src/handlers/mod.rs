//! The handlers, one file per API family. Each takes the dispatch
//! [`Context`](crate::dispatch::Context) and the decoded request and
//! returns the response body for the request's version.

pub(crate) mod answers;
pub mod api_versions;
pub mod authorized;
pub mod commits;
pub mod config_resources;
pub mod configs;
pub mod consumer_groups;
pub mod delegation_tokens;
pub mod delete_topics;
mod error_messages;
pub mod features;
pub mod fetch;
pub mod groups;
mod members;
pub mod metadata;
pub mod offsets;
pub mod produce;
pub mod quorum;
pub mod quotas;
pub mod replicas;
pub mod share;
pub mod share_admin;
pub mod streams_groups;
pub mod topics;
pub mod transactions;
pub mod txn_markers;
pub mod unregister;
pub mod unsupported;
pub mod validate;

use std::borrow::Cow;

/// An owned copy of a borrowed string, for a response.
pub(crate) fn owned(s: &str) -> Cow<'static, str> {
    Cow::Owned(s.to_owned())
}
