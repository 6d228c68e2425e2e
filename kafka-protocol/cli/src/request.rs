//! `request`: send one request body, in the crate's JSON form, to a broker
//! and print the response body.

use std::time::Duration;

use kafka_wire::negotiate::{negotiate, Unusable};
use kafka_wire::runtime::json::overlay;
use kafka_wire::IntoOwned;
use kafka_wire::{ApiKey, RequestBody};
use serde_json::Value;

use crate::apis::{check_version, resolve_api};
use crate::args::RequestArgs;
use crate::client::Client;
use crate::error::CliError;
use crate::input::read_all;
use crate::output::Output;

/// Runs `request`.
pub fn run(args: &RequestArgs, out: &mut Output) -> Result<(), CliError> {
    let api = resolve_api(&args.api)?;
    if let Some(version) = args.version {
        check_version(api, version)?;
    }
    let input = read_all(args.input.as_deref())?;
    let given: Value = serde_json::from_slice(&input).map_err(CliError::JsonSyntax)?;
    let timeout = Duration::from_millis(args.timeout_ms);
    let mut client = Client::connect(&args.bootstrap, &args.client_id, timeout)?;
    let version = match args.version {
        Some(version) => version,
        None => negotiated_version(&mut client, api, &args.bootstrap)?,
    };
    let body = body_from_json(api, version, given)?;
    let Some(answer) = client.send(api, version, body)? else {
        // A Produce with acks = 0: the broker sends nothing back.
        return Ok(());
    };
    let response = answer.decode()?;
    out.json_stream(args.compact, |json| {
        response.body.write_json(json, response.version)
    })
}

/// The highest version of `api` that the broker and kafka-wire both
/// support (stable versions only), from the broker's ApiVersions answer.
pub fn negotiated_version(
    client: &mut Client,
    api: ApiKey,
    address: &str,
) -> Result<i16, CliError> {
    let advertised = client.api_versions()?;
    let negotiated = negotiate(&advertised, false);
    if let Some(version) = negotiated.version(api) {
        return Ok(version);
    }
    let why = match negotiated.unusable(api) {
        Some(Unusable::NoCommonVersion { peer_min, peer_max }) => format!(
            "the broker supports versions {peer_min}-{peer_max}, kafka-wire {}-{}",
            api.lowest_version(),
            api.highest_stable_version()
        ),
        _ => "the broker does not advertise it".to_owned(),
    };
    Err(CliError::NoCommonVersion {
        api: api.name(),
        address: address.to_owned(),
        why,
    })
}

/// The request body of `api` at `version` that `given` describes: keys
/// that `given` leaves out of an object take their default from the
/// api's default body (objects nested in objects too; elements of arrays
/// are taken as given).
pub fn body_from_json(
    api: ApiKey,
    version: i16,
    given: Value,
) -> Result<RequestBody<'static>, CliError> {
    let mut value = RequestBody::default_for(api).to_json(version);
    overlay(&mut value, given);
    Ok(RequestBody::from_json(&value, api, version)?.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn left_out_keys_take_their_defaults() {
        let body = body_from_json(ApiKey::Metadata, 12, json!({"topics": null}));
        let json = body.map(|b| b.to_json(12)).ok();
        assert_eq!(
            json,
            Some(json!({
                "topics": null,
                "allowAutoTopicCreation": true,
                "includeTopicAuthorizedOperations": false
            }))
        );
        // A key the version lacks is still an error, with its path.
        let error = body_from_json(ApiKey::Metadata, 0, json!({"allowAutoTopicCreation": true}));
        let error = error.err().map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some("$: unknown field \"allowAutoTopicCreation\" for this version")
        );
        // A body that is not an object is one too.
        assert!(body_from_json(ApiKey::Metadata, 12, json!([])).is_err());
    }
}
