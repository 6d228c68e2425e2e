//! Kafka's uuid: 16 bytes on the wire, URL-safe base64 without padding in text.

use std::fmt;
use std::str::FromStr;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

/// A 16-byte uuid, as Kafka uses for topic ids and directory ids.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Uuid(pub [u8; 16]);

impl Uuid {
    /// The all-zero uuid, Kafka's `Uuid.ZERO_UUID`.
    pub const ZERO: Uuid = Uuid([0; 16]);

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&URL_SAFE_NO_PAD.encode(self.0))
    }
}

impl fmt::Debug for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Uuid({self})")
    }
}

/// A string that is not a Kafka uuid.
#[derive(Debug, Clone, PartialEq, Eq)]

pub struct ParseUuidError(pub String);

impl fmt::Display for ParseUuidError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ParseUuidError(value) = self;
        write!(
            f,
            "invalid uuid `{value}`: expected 22 URL-safe base64 characters"
        )
    }
}

impl std::error::Error for ParseUuidError {}

impl FromStr for Uuid {
    type Err = ParseUuidError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = || ParseUuidError(text.to_owned());
        if text.len() != 22 {
            return Err(invalid());
        }
        let bytes = URL_SAFE_NO_PAD.decode(text).map_err(|_| invalid())?;
        let array: [u8; 16] = bytes.try_into().map_err(|_| invalid())?;
        Ok(Uuid(array))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_form() {
        assert_eq!(Uuid::ZERO.to_string(), "AAAAAAAAAAAAAAAAAAAAAA");
        let uuid: Uuid = "H3KKO4NTRPaCWtEmm3vW7A".parse().unwrap_or_default();
        assert_eq!(uuid.to_string(), "H3KKO4NTRPaCWtEmm3vW7A");
        assert!("H3KKO4NTRPaCWtEmm3vW7".parse::<Uuid>().is_err());
        assert!("H3KKO4NTRPaCWtEmm3vW7!".parse::<Uuid>().is_err());
    }
}
