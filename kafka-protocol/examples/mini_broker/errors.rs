//! The Kafka error codes the broker answers with, as the `error_code`
//! fields carry them.

use kafka_wire::ErrorCode;

/// UNKNOWN_SERVER_ERROR.
pub const UNKNOWN_SERVER_ERROR: i16 = ErrorCode::UnknownServerError.code();
/// OFFSET_OUT_OF_RANGE.
pub const OFFSET_OUT_OF_RANGE: i16 = ErrorCode::OffsetOutOfRange.code();
/// CORRUPT_MESSAGE.
pub const CORRUPT_MESSAGE: i16 = ErrorCode::CorruptMessage.code();
/// UNKNOWN_TOPIC_OR_PARTITION.
pub const UNKNOWN_TOPIC_OR_PARTITION: i16 = ErrorCode::UnknownTopicOrPartition.code();
/// INVALID_TOPIC_EXCEPTION.
pub const INVALID_TOPIC: i16 = ErrorCode::InvalidTopicException.code();
/// TOPIC_ALREADY_EXISTS.
pub const TOPIC_ALREADY_EXISTS: i16 = ErrorCode::TopicAlreadyExists.code();
/// INVALID_PARTITIONS.
pub const INVALID_PARTITIONS: i16 = ErrorCode::InvalidPartitions.code();
/// OUT_OF_ORDER_SEQUENCE_NUMBER.
pub const OUT_OF_ORDER_SEQUENCE: i16 = ErrorCode::OutOfOrderSequenceNumber.code();
/// DUPLICATE_SEQUENCE_NUMBER.
pub const DUPLICATE_SEQUENCE: i16 = ErrorCode::DuplicateSequenceNumber.code();
/// UNSUPPORTED_FOR_MESSAGE_FORMAT.
pub const UNSUPPORTED_FOR_MESSAGE_FORMAT: i16 = ErrorCode::UnsupportedForMessageFormat.code();
/// LEADER_NOT_AVAILABLE: what Kafka answers while a topic is being
/// created; clients retry.
pub const LEADER_NOT_AVAILABLE: i16 = ErrorCode::LeaderNotAvailable.code();
/// INVALID_RECORD.
pub const INVALID_RECORD: i16 = ErrorCode::InvalidRecord.code();
/// UNKNOWN_TOPIC_ID.
pub const UNKNOWN_TOPIC_ID: i16 = ErrorCode::UnknownTopicId.code();
