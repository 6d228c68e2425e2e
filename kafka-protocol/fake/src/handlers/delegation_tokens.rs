//! The delegation token APIs (CreateDelegationToken, RenewDelegationToken,
//! ExpireDelegationToken, DescribeDelegationToken), refused as Kafka 4.4.0
//! refuses them with its default settings: a connection that did not
//! authenticate with SASL may not ask for tokens
//! (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED), and over SASL token
//! authentication is disabled, no `delegation.token.secret.key` being set
//! (DELEGATION_TOKEN_AUTH_DISABLED, its times 0 rather than -1). The fake
//! issues no tokens.

use std::borrow::Cow;

use kafka_wire::messages::{
    CreateDelegationTokenRequest, CreateDelegationTokenResponse, DescribeDelegationTokenResponse,
    ExpireDelegationTokenResponse, RenewDelegationTokenResponse,
};
use kafka_wire::{ErrorCode, ResponseBody};

use crate::dispatch::Context;

/// The principal type of Kafka's users.
const USER: &str = "User";

/// Why Kafka refuses a token request on this connection, and the times
/// its answer gives: -1 where it refuses the request at once, 0 where its
/// token manager (disabled) answers.
fn refusal(cx: &Context<'_>) -> (i16, i64) {
    if cx.shared.credentials.required() {
        (ErrorCode::DelegationTokenAuthDisabled.code(), 0)
    } else {
        (ErrorCode::DelegationTokenRequestNotAllowed.code(), -1)
    }
}

/// CreateDelegationToken: refused, naming the token's owner (the one
/// asked for, else the requester) and the requester.
pub fn create(
    cx: &Context<'_>,
    request: &CreateDelegationTokenRequest<'_>,
) -> ResponseBody<'static> {
    let (owner_type, owner) = match request.owner_principal_name.as_deref() {
        Some(name) if !name.is_empty() => (
            request
                .owner_principal_type
                .as_deref()
                .unwrap_or(USER)
                .to_owned(),
            name.to_owned(),
        ),
        _ => (USER.to_owned(), cx.principal.to_owned()),
    };
    let (error_code, time) = refusal(cx);
    let mut response = CreateDelegationTokenResponse {
        error_code,
        principal_type: Cow::Owned(owner_type),
        principal_name: Cow::Owned(owner),
        issue_timestamp_ms: time,
        expiry_timestamp_ms: time,
        max_timestamp_ms: time,
        ..Default::default()
    };
    // The requester is named from v3.
    if cx.version >= 3 {
        response.token_requester_principal_type = Cow::Borrowed(USER);
        response.token_requester_principal_name = Cow::Owned(cx.principal.to_owned());
    }
    ResponseBody::CreateDelegationToken(response)
}

/// RenewDelegationToken: refused, with no expiry.
pub fn renew(cx: &Context<'_>) -> ResponseBody<'static> {
    let (error_code, time) = refusal(cx);
    ResponseBody::RenewDelegationToken(RenewDelegationTokenResponse {
        error_code,
        expiry_timestamp_ms: time,
        ..Default::default()
    })
}

/// ExpireDelegationToken: refused, with no expiry.
pub fn expire(cx: &Context<'_>) -> ResponseBody<'static> {
    let (error_code, time) = refusal(cx);
    ResponseBody::ExpireDelegationToken(ExpireDelegationTokenResponse {
        error_code,
        expiry_timestamp_ms: time,
        ..Default::default()
    })
}

/// DescribeDelegationToken: refused, with no tokens.
pub fn describe(cx: &Context<'_>) -> ResponseBody<'static> {
    ResponseBody::DescribeDelegationToken(DescribeDelegationTokenResponse {
        error_code: refusal(cx).0,
        ..Default::default()
    })
}
