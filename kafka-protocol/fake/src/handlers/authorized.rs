//! The authorized operations describe answers carry, as Kafka 4.4.0 answers
//! them without an authorizer: every operation a resource type supports,
//! one bit per Kafka `AclOperation` code. Asked for and not asked for
//! (Kafka's schema default, `i32::MIN`) are told apart by each handler.

/// Bit `code` of an authorized-operations set.
const fn bit(code: u32) -> i32 {
    1 << code
}

/// A topic's: READ (3), WRITE (4), CREATE (5), DELETE (6), ALTER (7),
/// DESCRIBE (8), DESCRIBE_CONFIGS (10), ALTER_CONFIGS (11): 3576.
pub const TOPIC: i32 = bit(3) | bit(4) | bit(5) | bit(6) | bit(7) | bit(8) | bit(10) | bit(11);

/// The cluster's: CREATE (5), ALTER (7), DESCRIBE (8), CLUSTER_ACTION (9),
/// DESCRIBE_CONFIGS (10), ALTER_CONFIGS (11), IDEMPOTENT_WRITE (12): 8096.
pub const CLUSTER: i32 = bit(5) | bit(7) | bit(8) | bit(9) | bit(10) | bit(11) | bit(12);

/// A group's: READ (3), DELETE (6), DESCRIBE (8), DESCRIBE_CONFIGS (10),
/// ALTER_CONFIGS (11): 3400.
pub const GROUP: i32 = bit(3) | bit(6) | bit(8) | bit(10) | bit(11);

/// What a describe answers when the operations were not asked for.
pub const NOT_ASKED: i32 = i32::MIN;

/// `operations` when `asked`, else [`NOT_ASKED`].
pub fn when(asked: bool, operations: i32) -> i32 {
    if asked {
        operations
    } else {
        NOT_ASKED
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sets_are_kafkas_figures() {
        assert_eq!((TOPIC, CLUSTER, GROUP), (3576, 8096, 3400));
        assert_eq!(when(false, TOPIC), -2_147_483_648);
    }
}
