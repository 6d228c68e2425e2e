//! `versions`: what a broker advertises in ApiVersions against what
//! kafka-wire supports, and the version negotiation picks, per API.

use std::collections::BTreeMap;
use std::time::Duration;

use kafka_wire::negotiate::negotiate;
use kafka_wire::ApiKey;
use serde::Serialize;

use crate::args::VersionsArgs;
use crate::client::Client;
use crate::error::CliError;
use crate::output::Output;

/// One row: `None` is `-` in the table and `null` in JSON.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct Row {
    key: i16,
    name: Option<&'static str>,
    broker_min: Option<i16>,
    broker_max: Option<i16>,
    ours_min: Option<i16>,
    /// Our highest stable version: what negotiation offers.
    ours_max: Option<i16>,
    chosen: Option<i16>,
}

/// The rows for a broker's advertised `(key, min, max)` ranges (its first
/// entry per key counts, as in negotiation), sorted by key: every API
/// either side has.
pub fn rows(advertised: &kafka_wire::messages::ApiVersionsResponse<'_>) -> Vec<Row> {
    let negotiated = negotiate(advertised, false);
    let mut broker: BTreeMap<i16, (i16, i16)> = BTreeMap::new();
    for range in advertised.api_keys.iter() {
        broker
            .entry(range.api_key)
            .or_insert((range.min_version, range.max_version));
    }
    let mut keys: Vec<i16> = broker.keys().copied().collect();
    keys.extend(ApiKey::ALL.iter().map(|api| api.key()));
    keys.sort_unstable();
    keys.dedup();
    keys.into_iter()
        .map(|key| {
            let ours = ApiKey::from_key(key);
            let theirs = broker.get(&key);
            Row {
                key,
                name: ours.map(ApiKey::name),
                broker_min: theirs.map(|r| r.0),
                broker_max: theirs.map(|r| r.1),
                ours_min: ours.map(ApiKey::lowest_version),
                ours_max: ours.map(ApiKey::highest_stable_version),
                chosen: ours.and_then(|api| negotiated.version(api)),
            }
        })
        .collect()
}

/// Runs `versions`: a header row and one tab-separated row per API, or
/// (`--json`) an array of objects with the same keys.
pub fn run(args: &VersionsArgs, out: &mut Output) -> Result<(), CliError> {
    let timeout = Duration::from_millis(args.timeout_ms);
    let mut client = Client::connect(&args.bootstrap, &args.client_id, timeout)?;
    let rows = rows(&client.api_versions()?);
    if args.json {
        return out.json(&rows, args.compact);
    }
    out.line("key\tname\tbroker_min\tbroker_max\tours_min\tours_max\tchosen")?;
    let cell = |v: Option<i16>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
    for row in &rows {
        out.line(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}",
            row.key,
            row.name.unwrap_or("-"),
            cell(row.broker_min),
            cell(row.broker_max),
            cell(row.ours_min),
            cell(row.ours_max),
            cell(row.chosen)
        ))?;
    }
    Ok(())
}
