//! Kafka's own message of an error code: what its `Errors.message()` gives,
//! the default message of the code's exception (or, for NONE, which has
//! none, the name "NONE"). Answers that carry an errorMessage without
//! anything more specific to say write this, as Kafka 4.4.0 does.

use kafka_wire::ErrorCode;

/// Kafka 4.4.0's message for `code`, for the codes the fake answers with
/// Kafka's default message; `None` for the others.
pub(crate) fn kafka_message(code: i16) -> Option<&'static str> {
    Some(match ErrorCode::from(code) {
        ErrorCode::None => "NONE",
        ErrorCode::CoordinatorNotAvailable => "The coordinator is not available.",
        ErrorCode::NotCoordinator => "This is not the correct coordinator.",
        ErrorCode::CoordinatorLoadInProgress => {
            "The coordinator is loading and hence can't process requests."
        }
        ErrorCode::InvalidRequest => {
            "This most likely occurs because of a request being malformed by the client library \
             or the message was sent to an incompatible broker. See the broker logs for more \
             details."
        }
        ErrorCode::UnknownTopicOrPartition => "This server does not host this topic-partition.",
        ErrorCode::UnknownTopicId => "This server does not host this topic ID.",
        _ => return None,
    })
}

/// Kafka 4.4.0's message for a CreateTopics refusal of topic `name` with
/// `partitions` asked for, where it says more than the code: an invalid
/// name (why), an existing topic, a non-positive partition count.
pub(crate) fn create_topic_message(code: i16, name: &str, partitions: i32) -> Option<String> {
    match ErrorCode::from(code) {
        ErrorCode::InvalidTopicException => {
            let why = match name {
                "" => "the empty string is not allowed".to_owned(),
                "." | ".." => format!("'{name}' is not allowed"),
                _ if name.chars().count() > 249 => {
                    format!("the length of '{name}' is longer than the max allowed length 249")
                }
                _ => format!(
                    "'{name}' contains one or more characters other than ASCII alphanumerics, \
                     '.', '_' and '-'"
                ),
            };
            Some(format!("Topic name is invalid: {why}"))
        }
        ErrorCode::TopicAlreadyExists => Some(format!("Topic '{name}' already exists.")),
        ErrorCode::InvalidPartitions if partitions <= 0 => {
            Some("Number of partitions was set to an invalid non-positive value.".to_owned())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_codes_have_kafkas_words_and_others_none() {
        assert_eq!(kafka_message(0), Some("NONE"));
        assert_eq!(kafka_message(15), Some("The coordinator is not available."));
        assert!(kafka_message(42).is_some_and(|m| m.ends_with("for more details.")));
        assert_eq!(
            kafka_message(3),
            Some("This server does not host this topic-partition.")
        );
        assert_eq!(kafka_message(-1), None);
    }
}
