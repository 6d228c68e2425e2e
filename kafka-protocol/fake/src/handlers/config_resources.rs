//! ListConfigResources (KIP-1142; v0 was ListClientMetricsResources): the
//! resources that have configs, by type, as Kafka 4.4.0 lists them: every
//! topic, every broker (as a broker and as a broker's loggers), the groups
//! given configs, and the client metrics subscriptions (the fake has none).

use std::borrow::Cow;

use kafka_wire::messages::{
    list_config_resources_response, ListConfigResourcesRequest, ListConfigResourcesResponse,
};
use kafka_wire::{ErrorCode, ResponseBody};

use crate::dispatch::Context;

/// The resource types listed, in the order Kafka 4.4.0 lists them.
const GROUP: i8 = 32;
const CLIENT_METRICS: i8 = 16;
const BROKER_LOGGER: i8 = 8;
const BROKER: i8 = 4;
const TOPIC: i8 = 2;
const LISTED: [i8; 5] = [GROUP, CLIENT_METRICS, BROKER_LOGGER, BROKER, TOPIC];

/// ListConfigResources of the types asked (v1; none asked: all), or of
/// client metrics (v0). A type Kafka does not list is UNSUPPORTED_VERSION
/// with nothing listed.
pub fn list_config_resources(
    cx: &Context<'_>,
    request: &ListConfigResourcesRequest<'_>,
) -> ResponseBody<'static> {
    let asked: Vec<i8> = if cx.version == 0 {
        vec![CLIENT_METRICS]
    } else {
        request.resource_types.iter().collect()
    };
    if asked.iter().any(|t| !LISTED.contains(t)) {
        return ResponseBody::ListConfigResources(ListConfigResourcesResponse {
            error_code: ErrorCode::UnsupportedVersion.code(),
            ..Default::default()
        });
    }
    let brokers: Vec<String> = cx
        .shared
        .control
        .members()
        .iter()
        .map(|m| m.address.node_id.to_string())
        .collect();
    let state = cx.shared.state();
    let mut resources = Vec::new();
    for kind in LISTED {
        if !asked.is_empty() && !asked.contains(&kind) {
            continue;
        }
        let names: Vec<String> = match kind {
            GROUP => {
                let mut groups: Vec<String> = state
                    .share_groups
                    .configs
                    .iter()
                    .filter(|(_, configs)| !configs.is_empty())
                    .map(|(group, _)| group.clone())
                    .collect();
                groups.sort();
                groups
            }
            BROKER_LOGGER | BROKER => brokers.clone(),
            TOPIC => state.topics.names(),
            _ => Vec::new(),
        };
        resources.extend(names.into_iter().map(|name| {
            list_config_resources_response::ConfigResource {
                resource_name: Cow::Owned(name),
                resource_type: kind,
                ..Default::default()
            }
        }));
    }
    ResponseBody::ListConfigResources(ListConfigResourcesResponse {
        config_resources: resources.into(),
        ..Default::default()
    })
}
