//! Strings for responses: handlers answer with owned copies of what the
//! request lent them, so that a response outlives its request.

use std::borrow::Cow;

/// An owned copy of a borrowed string, for a response.
pub(super) fn owned(s: &str) -> Cow<'static, str> {
    Cow::Owned(s.to_owned())
}
