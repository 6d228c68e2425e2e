//! The hook [`dispatch`](crate::dispatch::dispatch) calls around routing a
//! request: it records the request, waits the broker's round-trip delay
//! and applies the first control that fires, then patches or counts what
//! the handler answered.

use std::sync::atomic::Ordering;

use kafka_wire::{RequestBody, ResponseBody};

use super::{errors, lock, Action, FaultKind, RecordedRequest};
use crate::dispatch::context::{Context, Outcome};
use crate::handlers::validate::records_in;

/// What [`before`] decided.
pub(crate) enum Step {
    /// Handle the request normally.
    Handle,
    /// Answer this instead of handling it.
    Answer(Outcome),
    /// Handle it, then close the connection instead of answering.
    HandleThenClose,
    /// Handle `request` (or the original when `None`), then put `code` in
    /// the chosen partitions' answers.
    Patch {
        request: Option<Box<RequestBody<'static>>>,
        code: i16,
        partitions: Vec<(String, i32)>,
    },
}

/// The hook [`dispatch`](crate::dispatch::dispatch) calls before routing:
/// records the request, waits the broker's round-trip delay, and applies
/// the first control that fires.
pub(crate) async fn before(cx: &Context<'_>, body: &RequestBody<'_>) -> Step {
    let controls = &cx.shared.control;
    if let Some(ring) = lock(&controls.recorder).as_mut() {
        ring.push(RecordedRequest {
            api: body.api_key(),
            version: cx.version,
            broker: cx.node_id,
            connection: cx.connection,
        });
    }
    let rtt = lock(&controls.rtt).get(&cx.node_id).copied();
    if let Some(rtt) = rtt {
        tokio::time::sleep(rtt).await;
    }
    let Some(action) = controls.fire(cx.node_id, cx.connection, body) else {
        return Step::Handle;
    };
    match action {
        Action::Observe => Step::Handle,
        Action::Error(code) => {
            controls.count(FaultKind::Error);
            Step::Answer(Outcome::Respond(Box::new(errors::error_response(
                body, cx.version, code,
            ))))
        }
        Action::PartitionError(code, partitions) => {
            controls.count(FaultKind::Error);
            if !errors::per_partition(body.api_key()) {
                return Step::Answer(Outcome::Respond(Box::new(errors::error_response(
                    body, cx.version, code,
                ))));
            }
            Step::Patch {
                request: errors::without_chosen(cx.shared, body, &partitions).map(Box::new),
                code,
                partitions,
            }
        }
        Action::Respond(build) => {
            let response: ResponseBody<'static> = build(body, cx.version);
            if response.api_key() != body.api_key() {
                return Step::Answer(Outcome::Close(format!(
                    "a control answered a {} request with a {} response",
                    body.api_key().name(),
                    response.api_key().name()
                )));
            }
            Step::Answer(Outcome::Respond(Box::new(response)))
        }
        Action::Delay { min, max } => {
            controls.count(FaultKind::Delay);
            let span = max.saturating_sub(min);
            let wait = min + span.mul_f64(controls.next_f64());
            tokio::time::sleep(wait).await;
            Step::Handle
        }
        Action::Hang => {
            controls.count(FaultKind::Hang);
            std::future::pending::<()>().await;
            Step::Handle
        }
        Action::DropBefore => {
            controls.count(FaultKind::DropBefore);
            Step::Answer(Outcome::Close("a control dropped the request".into()))
        }
        Action::DropAfter => {
            controls.count(FaultKind::DropAfter);
            Step::HandleThenClose
        }
    }
}

/// Applies [`Step::Patch`]'s error codes to a handled request's outcome.
pub(crate) fn patch(
    cx: &Context<'_>,
    request: &RequestBody<'_>,
    outcome: Outcome,
    code: i16,
    partitions: &[(String, i32)],
) -> Outcome {
    match outcome {
        Outcome::Respond(mut body) => {
            errors::patch_chosen(cx.shared, request, &mut body, code, partitions);
            Outcome::Respond(body)
        }
        other => other,
    }
}

/// Counts the records whose answer a drop-after fault drops: those of
/// the partitions a Produce handled without an error (`outcome`).
pub(crate) fn answer_dropped(cx: &Context<'_>, body: &RequestBody<'_>, outcome: &Outcome) {
    let (RequestBody::Produce(request), Outcome::Respond(response)) = (body, outcome) else {
        return;
    };
    let ResponseBody::Produce(response) = &**response else {
        return;
    };
    let mut records = 0;
    for (topic, answers) in request.topic_data.iter().zip(response.responses.iter()) {
        for partition in topic.partition_data.iter() {
            let appended = answers
                .partition_responses
                .iter()
                .any(|a| a.index == partition.index && a.error_code == 0);
            if appended {
                records += records_in(partition.records.as_deref().unwrap_or_default());
            }
        }
    }
    cx.shared
        .control
        .dropped_answer_records
        .fetch_add(records, Ordering::Relaxed);
}
