//! DescribeClientQuotas and AlterClientQuotas (KIP-546): quotas are kept
//! and described as Kafka's controller keeps them, and enforced nowhere
//! (the fake throttles no one).

use kafka_wire::messages::{
    alter_client_quotas_response, describe_client_quotas_response, AlterClientQuotasRequest,
    AlterClientQuotasResponse, DescribeClientQuotasRequest, DescribeClientQuotasResponse,
};
use kafka_wire::{ErrorCode, ResponseBody};

use super::owned;
use crate::dispatch::Context;
use crate::state::quotas::{check_entity, check_value, Component, Entity, QuotaError};

/// The error code and message of a refusal.
fn refusal(error: QuotaError) -> (i16, String) {
    match error {
        QuotaError::Invalid(message) => (ErrorCode::InvalidRequest.code(), message),
        QuotaError::Unsupported(message) => (ErrorCode::UnsupportedVersion.code(), message),
    }
}

/// The entities that match the filter, with their quotas; a bad filter
/// fails the whole request (no entries).
pub fn describe_client_quotas(
    cx: &Context<'_>,
    request: &DescribeClientQuotasRequest<'_>,
) -> ResponseBody<'static> {
    let given: Vec<_> = request.components.iter().collect();
    let components: Vec<Component<'_>> = given
        .iter()
        .map(|c| Component {
            entity_type: c.entity_type.as_ref(),
            match_type: c.match_type,
            name: c.r#match.as_deref(),
        })
        .collect();
    let state = cx.shared.state();
    let response = match state.quotas.describe(&components, request.strict) {
        Ok(found) => DescribeClientQuotasResponse {
            entries: Some(
                found
                    .into_iter()
                    .map(
                        |(entity, values)| describe_client_quotas_response::EntryData {
                            entity: entity
                                .iter()
                                .map(|(kind, name)| describe_client_quotas_response::EntityData {
                                    entity_type: owned(kind),
                                    entity_name: name.as_deref().map(owned),
                                    ..Default::default()
                                })
                                .collect::<Vec<_>>()
                                .into(),
                            values: values
                                .iter()
                                .map(|(key, value)| describe_client_quotas_response::ValueData {
                                    key: owned(key),
                                    value: *value,
                                    ..Default::default()
                                })
                                .collect::<Vec<_>>()
                                .into(),
                            ..Default::default()
                        },
                    )
                    .collect::<Vec<_>>()
                    .into(),
            ),
            ..Default::default()
        },
        Err(error) => {
            let (error_code, message) = refusal(error);
            DescribeClientQuotasResponse {
                error_code,
                error_message: Some(message.into()),
                entries: None,
                ..Default::default()
            }
        }
    };
    ResponseBody::DescribeClientQuotas(response)
}

/// Sets or removes quotas, entity by entity: an entity with a bad type or
/// a bad key or value gets INVALID_REQUEST and none of its changes;
/// `validate_only` changes nothing. As Kafka's controller keys its answer
/// by entity, an entity named twice is answered once, with the outcome of
/// its last entry.
pub fn alter_client_quotas(
    cx: &Context<'_>,
    request: &AlterClientQuotasRequest<'_>,
) -> ResponseBody<'static> {
    let mut state = cx.shared.state();
    let mut answers: Vec<(Entity, alter_client_quotas_response::EntryData<'static>)> = Vec::new();
    for entry in request.entries.iter() {
        let mut entity: Entity = entry
            .entity
            .iter()
            .map(|e| {
                (
                    e.entity_type.to_string(),
                    e.entity_name.as_deref().map(str::to_owned),
                )
            })
            .collect();
        entity.sort();
        let ops: Vec<(String, Option<f64>)> = entry
            .ops
            .iter()
            .map(|op| (op.key.to_string(), (!op.remove).then_some(op.value)))
            .collect();
        let checked = check_entity(&entity).and_then(|()| {
            ops.iter()
                .try_for_each(|(key, value)| check_value(&entity, key, *value))
        });
        let (error_code, error_message) = match checked {
            Ok(()) => {
                if !request.validate_only {
                    state.quotas.alter(entity.clone(), ops);
                }
                (0, None)
            }
            Err(error) => {
                let (code, message) = refusal(error);
                (code, Some(message.into()))
            }
        };
        match answers.iter_mut().find(|(known, _)| *known == entity) {
            Some((_, answer)) => {
                answer.error_code = error_code;
                answer.error_message = error_message;
            }
            None => answers.push((
                entity,
                alter_client_quotas_response::EntryData {
                    error_code,
                    error_message,
                    entity: entry
                        .entity
                        .iter()
                        .map(|e| alter_client_quotas_response::EntityData {
                            entity_type: owned(&e.entity_type),
                            entity_name: e.entity_name.as_deref().map(owned),
                            ..Default::default()
                        })
                        .collect::<Vec<_>>()
                        .into(),
                    ..Default::default()
                },
            )),
        }
    }
    ResponseBody::AlterClientQuotas(AlterClientQuotasResponse {
        entries: answers
            .into_iter()
            .map(|(_, answer)| answer)
            .collect::<Vec<_>>()
            .into(),
        ..Default::default()
    })
}
