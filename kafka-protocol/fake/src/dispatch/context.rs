//! What a handler is given and what it gives back: the [`Context`] of a
//! request (cluster, broker, version, client) and its [`Outcome`].

use std::sync::Arc;

use kafka_wire::ResponseBody;

use crate::state::Shared;

/// Who is asking, and where.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The cluster.
    pub shared: &'a Arc<Shared>,
    /// The broker the request reached.
    pub node_id: i32,
    /// The request's version.
    pub version: i16,
    /// The request header's client id.
    pub client_id: &'a str,
    /// The client's address.
    pub client_host: &'a str,
    /// The connection's number (across the cluster, as in logs).
    pub connection: u64,
    /// The name of the client's principal (of type `User`): its SASL user,
    /// or [`ANONYMOUS`] without SASL.
    pub principal: &'a str,
}

/// The principal of a client that did not authenticate, as Kafka names it.
pub const ANONYMOUS: &str = "ANONYMOUS";

/// What becomes of a request.
#[derive(Debug)]
pub enum Outcome {
    /// Answer with this body, at the request's version.
    Respond(Box<ResponseBody<'static>>),
    /// Send nothing (Produce with acks=0).
    NoResponse,
    /// Close the connection, for this reason.
    Close(String),
}
