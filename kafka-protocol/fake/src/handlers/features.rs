//! UpdateFeatures: checked as Kafka's controller checks an update, against
//! the features of [`crate::versions::FEATURES`]. The fake's finalized
//! levels are fixed at Kafka 4.4.0's defaults (each feature's highest
//! level, so no upgrade is possible): an update to a feature's level, or
//! one validated only, succeeds; one that would change a level is refused
//! INVALID_UPDATE_VERSION, the fake being unable to run at another level.

use kafka_wire::messages::{
    update_features_response, UpdateFeaturesRequest, UpdateFeaturesResponse,
};
use kafka_wire::{ErrorCode, ResponseBody};

use super::error_messages::kafka_message;
use super::owned;
use crate::dispatch::Context;
use crate::versions::FEATURES;

/// UpdateFeatures' upgrade types (v1+; v0 has `allow_downgrade`).
const UPGRADE: i8 = 1;
const SAFE_DOWNGRADE: i8 = 2;
const UNSAFE_DOWNGRADE: i8 = 3;

/// Checks one update: Ok for one to the current level, or a change
/// allowed in kind (kept only when validating), else the refusal's
/// message.
fn check(
    controller: i32,
    feature: &str,
    level: i16,
    upgrade_type: i8,
    validate_only: bool,
) -> Result<(), String> {
    let Some(&(_, min, max, finalized)) = FEATURES.iter().find(|(name, ..)| *name == feature)
    else {
        return Err(format!(
            "Invalid update version {level} for feature {feature}. Local controller {controller} does not support this feature."
        ));
    };
    if level == finalized {
        return Ok(());
    }
    if level > max || (level < min && level != 0) {
        return Err(format!(
            "Invalid update version {level} for feature {feature}. Local controller {controller} only supports versions {min}-{max}"
        ));
    }
    if level < finalized && upgrade_type == UPGRADE {
        return Err(format!(
            "Invalid update version {level} for feature {feature}. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."
        ));
    }
    if !matches!(upgrade_type, UPGRADE | SAFE_DOWNGRADE | UNSAFE_DOWNGRADE) {
        return Err(format!(
            "Invalid upgrade type {upgrade_type} for feature {feature}."
        ));
    }
    if validate_only {
        Ok(())
    } else {
        Err(format!(
            "Invalid update version {level} for feature {feature}. The fake's finalized feature levels are fixed."
        ))
    }
}

/// UpdateFeatures: the first refused update fails the whole request with
/// the top-level error and no per-feature results, as Kafka's controller
/// answers; a request that succeeds lists each feature (below v2).
pub fn update_features(
    cx: &Context<'_>,
    request: &UpdateFeaturesRequest<'_>,
) -> ResponseBody<'static> {
    let updates: Vec<_> = request.feature_updates.iter().collect();
    let controller = cx.shared.controller();
    let refused = updates.iter().find_map(|u| {
        // v0 asks a downgrade with allow_downgrade (an unsafe one).
        let upgrade_type = if cx.version == 0 {
            if u.allow_downgrade {
                UNSAFE_DOWNGRADE
            } else {
                UPGRADE
            }
        } else {
            u.upgrade_type
        };
        check(
            controller,
            &u.feature,
            u.max_version_level,
            upgrade_type,
            request.validate_only,
        )
        .err()
    });
    let (error_code, error_message) = match &refused {
        // Kafka's controller fails the whole request, saying which
        // feature's error did.
        Some(message) => (
            ErrorCode::InvalidUpdateVersion.code(),
            Some(
                format!(
                    "The update failed for all features since the following feature had an \
                     error: {message}"
                )
                .into(),
            ),
        ),
        None => (0, None),
    };
    ResponseBody::UpdateFeatures(UpdateFeaturesResponse {
        error_code,
        error_message,
        results: if refused.is_some() {
            Vec::new()
        } else {
            updates
                .iter()
                .map(|u| update_features_response::UpdatableFeatureResult {
                    feature: owned(&u.feature),
                    // Kafka's words for no error.
                    error_message: kafka_message(0).map(Into::into),
                    ..Default::default()
                })
                .collect::<Vec<_>>()
        }
        .into(),
        ..Default::default()
    })
}
