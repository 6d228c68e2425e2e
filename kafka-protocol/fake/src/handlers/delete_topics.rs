//! DeleteTopics, as Kafka 4.4.0's controller takes it: topics named by
//! name (v0-5) or by name or id (v6+), each at most once, refused with its
//! codes and messages where it refuses them.

use std::collections::{BTreeMap, BTreeSet};

use kafka_wire::messages::{delete_topics_response, DeleteTopicsRequest, DeleteTopicsResponse};
use kafka_wire::runtime::Uuid;
use kafka_wire::{ErrorCode, ResponseBody};

use super::error_messages::kafka_message;
use crate::dispatch::Context;

/// One answer: the topic's name (if known), its id (zero if not), the
/// error code and its message (none on success).
type Outcome = (Option<String>, Uuid, i16, Option<String>);

fn refused(name: Option<&str>, id: Uuid, code: ErrorCode, message: Option<&str>) -> Outcome {
    let message = message.or_else(|| kafka_message(code.code()));
    (
        name.map(str::to_owned),
        id,
        code.code(),
        message.map(str::to_owned),
    )
}

/// Names (or ids) given once, in the order first given, and those given
/// more than once (refused).
struct Given<T> {
    once: Vec<T>,
    again: BTreeSet<T>,
}

impl<T: Ord + Clone> Given<T> {
    fn new() -> Self {
        Given {
            once: Vec::new(),
            again: BTreeSet::new(),
        }
    }

    fn add(&mut self, item: T) {
        if self.again.contains(&item) {
            return;
        }
        if let Some(at) = self.once.iter().position(|seen| *seen == item) {
            self.once.remove(at);
            self.again.insert(item);
        } else {
            self.once.push(item);
        }
    }
}

/// Deletes topics. The answers come in the order Kafka's controller makes
/// them before it shuffles them (so that their places say nothing): the
/// refused requests, the duplicates, the unknown ids, the names, then the
/// deleted topics.
pub fn delete_topics(cx: &Context<'_>, request: &DeleteTopicsRequest<'_>) -> ResponseBody<'static> {
    let mut outcomes: Vec<Outcome> = Vec::new();
    let mut names = Given::new();
    let mut ids = Given::new();
    if cx.version >= 6 {
        for topic in request.topics.iter() {
            match (topic.name.as_deref(), topic.topic_id == Uuid::ZERO) {
                (None, true) => outcomes.push(refused(
                    None,
                    Uuid::ZERO,
                    ErrorCode::InvalidRequest,
                    Some("Neither topic name nor id were specified."),
                )),
                (None, false) => ids.add(topic.topic_id),
                (Some(name), true) => names.add(name.to_owned()),
                (Some(name), false) => outcomes.push(refused(
                    Some(name),
                    topic.topic_id,
                    ErrorCode::InvalidRequest,
                    Some("You may not specify both topic name and topic id."),
                )),
            }
        }
    } else {
        for name in request.topic_names.iter() {
            names.add(name.to_string());
        }
    }
    for name in &names.again {
        outcomes.push(refused(
            Some(name),
            Uuid::ZERO,
            ErrorCode::InvalidRequest,
            Some("Duplicate topic name."),
        ));
    }
    for id in &ids.again {
        outcomes.push(refused(
            None,
            *id,
            ErrorCode::InvalidRequest,
            Some("Duplicate topic id."),
        ));
    }
    let mut state = cx.shared.state();
    // The topics to delete, by id, with their names.
    let mut doomed: BTreeMap<Uuid, String> = BTreeMap::new();
    let mut order: Vec<Uuid> = Vec::new();
    for id in ids.once {
        match state.topics.name_of(id) {
            Some(name) => {
                doomed.insert(id, name.to_owned());
                order.push(id);
            }
            None => outcomes.push(refused(None, id, ErrorCode::UnknownTopicId, None)),
        }
    }
    for name in names.once {
        let Some(id) = state.topics.get(&name).map(|t| t.id) else {
            outcomes.push(refused(
                Some(&name),
                Uuid::ZERO,
                ErrorCode::UnknownTopicOrPartition,
                None,
            ));
            continue;
        };
        if ids.again.contains(&id) || doomed.contains_key(&id) {
            // Named twice, by id and by name: neither is deleted.
            doomed.remove(&id);
            outcomes.push(refused(
                Some(&name),
                id,
                ErrorCode::InvalidRequest,
                Some("The provided topic name maps to an ID that was already supplied."),
            ));
        } else {
            doomed.insert(id, name);
            order.push(id);
        }
    }
    for id in order {
        let Some(name) = doomed.remove(&id) else {
            continue;
        };
        let outcome = match state.topics.delete(&name) {
            Ok((name, id)) => {
                state.groups.forget_topic(&name);
                (Some(name), id, 0, None)
            }
            Err(code) => refused(Some(&name), id, ErrorCode::from(code), None),
        };
        outcomes.push(outcome);
    }
    let responses = outcomes
        .into_iter()
        .map(|(name, topic_id, error_code, error_message)| {
            delete_topics_response::DeletableTopicResult {
                name: name.map(Into::into),
                topic_id,
                error_code,
                error_message: error_message.map(Into::into),
                ..Default::default()
            }
        })
        .collect();
    ResponseBody::DeleteTopics(DeleteTopicsResponse {
        responses,
        ..Default::default()
    })
}
