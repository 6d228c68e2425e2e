//! The leaf values a schema is written in: version ranges, scalar types,
//! message kinds and field defaults.
//!
//! Below the model and the IR, which both hold them, and importing nothing
//! of the crate: the emitters read these from the IR without reaching into
//! the model.

mod default_value;
mod message_kind;
mod scalar;
mod versions;

pub use default_value::DefaultValue;
pub use message_kind::MessageKind;
pub use scalar::Scalar;
pub use versions::Versions;
