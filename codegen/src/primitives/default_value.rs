//! Field defaults, as the model parses them and the emitters write them.

/// A field's explicit default, parsed for its type.
#[derive(Debug, Clone, PartialEq)]
pub enum DefaultValue {
    /// No `default` key: the type's natural default applies.
    Implicit,
    /// `"null"`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An integer, decimal or hex.
    Int(i128),
    /// A float64 literal.
    Float(f64),
    /// A string field's default text.
    String(String),
    /// A uuid, decoded from Kafka's base64url form.
    Uuid([u8; 16]),
}
