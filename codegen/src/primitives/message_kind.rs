//! What a schema file describes: its `type`.

/// What a schema file describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MessageKind {
    /// The body of an API request.
    Request,
    /// The body of an API response.
    Response,
    /// A request or response header.
    Header,
    /// A data structure stored or embedded elsewhere.
    Data,
    /// A KRaft metadata record.
    Metadata,
    /// A group coordinator record key.
    CoordinatorKey,
    /// A group coordinator record value.
    CoordinatorValue,
}

impl MessageKind {
    /// Parses the schema's `type` value.
    pub fn parse(text: &str) -> Option<MessageKind> {
        Some(match text {
            "request" => MessageKind::Request,
            "response" => MessageKind::Response,
            "header" => MessageKind::Header,
            "data" => MessageKind::Data,
            "metadata" => MessageKind::Metadata,
            "coordinator-key" => MessageKind::CoordinatorKey,
            "coordinator-value" => MessageKind::CoordinatorValue,
            _ => return None,
        })
    }

    /// The schema's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            MessageKind::Request => "request",
            MessageKind::Response => "response",
            MessageKind::Header => "header",
            MessageKind::Data => "data",
            MessageKind::Metadata => "metadata",
            MessageKind::CoordinatorKey => "coordinator-key",
            MessageKind::CoordinatorValue => "coordinator-value",
        }
    }

    /// True for the kinds whose `apiKey` must be unique within the kind.
    pub fn has_api_key(self) -> bool {
        !matches!(self, MessageKind::Header | MessageKind::Data)
    }
}
