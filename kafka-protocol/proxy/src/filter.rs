//! What a filter decides for each request and response crossing the proxy.

use kafka_wire::runtime::DecodeError;
use kafka_wire::{RequestBody, ResponseBody};

use super::proxied::{ProxiedRequest, ProxiedResponse};
use super::sasl::SaslToken;

/// What to do with a request from the client.
// Both payloads are whole bodies, of different sizes; boxing them would
// allocate for every rewritten frame, and an action lives only until the
// connection acts on it.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum RequestAction<'a> {
    /// Send the frame to the broker byte for byte, decoding nothing.
    Forward,
    /// Send this body instead, at the request's version, after the request's
    /// own header bytes. A body decoded from the request and changed in part
    /// copies its untouched arrays as bytes.
    Replace(RequestBody<'a>),
    /// Do not send it to the broker; answer the client with this body, at
    /// the request's version. The answer reaches the client in request
    /// order, after the answers to earlier requests.
    Respond(ResponseBody<'a>),
}

/// What to do with a response from the broker.
#[derive(Debug)]
pub enum ResponseAction<'a> {
    /// Send the frame to the client byte for byte, decoding nothing.
    Forward,
    /// Send this body instead, at the response's version, after the
    /// response's own header bytes.
    Replace(Box<ResponseBody<'a>>),
}

/// Decides, per frame, what the proxy does. Both methods default to
/// [`RequestAction::Forward`] / [`ResponseAction::Forward`], so a filter
/// implements only what it needs. A decoding error closes the connection.
pub trait Filter {
    /// Called for each request, in the order the client sent them.
    fn on_request<'a>(
        &mut self,
        request: &'a ProxiedRequest,
    ) -> Result<RequestAction<'a>, DecodeError> {
        let _ = request;
        Ok(RequestAction::Forward)
    }

    /// Called for each response, in the order the broker sent them, with the
    /// request it answers (matched by correlation id). The request holds
    /// its body only when [`super::Config::keep_request_bodies`] is set;
    /// otherwise only its header.
    fn on_response<'a>(
        &mut self,
        request: &ProxiedRequest,
        response: &'a ProxiedResponse,
    ) -> Result<ResponseAction<'a>, DecodeError> {
        let _ = (request, response);
        Ok(ResponseAction::Forward)
    }

    /// Called for each request that gets no response (Produce with
    /// `acks=0`), after it was sent on.
    fn on_unanswered(&mut self, request: &ProxiedRequest) {
        let _ = request;
    }

    /// Called for each bare SASL token exchange after a SaslHandshake v0
    /// (see [`SaslToken`]), when the broker's answer arrives. Both frames
    /// are forwarded untouched, whatever the filter does; the tokens are
    /// secrets and must not be logged.
    fn on_sasl_token(&mut self, token: &SaslToken<'_>) {
        let _ = token;
    }
}

/// The filter that passes everything through untouched.
#[derive(Debug, Clone, Copy, Default)]
pub struct PassThrough;

impl Filter for PassThrough {}
