//! UnregisterBroker and UnregisterController: an admin dropping a node's
//! registration (`kafka-cluster.sh unregister`), answered as Kafka 4.4.0's
//! controller answers it. The fake's brokers are registered while they are
//! its members, running or stopped, and register again at once: an
//! unregistered broker stays in the cluster. Its one controller is the
//! first running broker, which cannot unregister itself while active.

use std::borrow::Cow;

use kafka_wire::messages::{
    UnregisterBrokerRequest, UnregisterBrokerResponse, UnregisterControllerRequest,
    UnregisterControllerResponse,
};
use kafka_wire::{ErrorCode, ResponseBody};

use crate::dispatch::Context;

/// UnregisterBroker: BROKER_ID_NOT_REGISTERED for an id no broker has.
pub fn unregister_broker(
    cx: &Context<'_>,
    request: &UnregisterBrokerRequest<'_>,
) -> ResponseBody<'static> {
    let id = request.broker_id;
    let registered = cx
        .shared
        .control
        .members()
        .iter()
        .any(|m| m.address.node_id == id);
    let (error_code, error_message) = if registered {
        (0, String::new())
    } else {
        (
            ErrorCode::BrokerIdNotRegistered.code(),
            format!("Broker ID {id} is not currently registered"),
        )
    };
    ResponseBody::UnregisterBroker(UnregisterBrokerResponse {
        error_code,
        error_message: Some(Cow::Owned(error_message)),
        ..Default::default()
    })
}

/// UnregisterController: the active controller refuses to unregister
/// itself (INVALID_REQUEST); any other id is CONTROLLER_ID_NOT_REGISTERED.
pub fn unregister_controller(
    cx: &Context<'_>,
    request: &UnregisterControllerRequest<'_>,
) -> ResponseBody<'static> {
    let id = request.controller_id;
    let (error_code, error_message) = if id == cx.shared.controller() {
        (
            ErrorCode::InvalidRequest.code(),
            "Controller cannot unregister itself while it is active.".to_owned(),
        )
    } else {
        (
            ErrorCode::ControllerIdNotRegistered.code(),
            format!("Controller ID {id} is not currently registered."),
        )
    };
    ResponseBody::UnregisterController(UnregisterControllerResponse {
        error_code,
        error_message: Some(Cow::Owned(error_message)),
        ..Default::default()
    })
}
