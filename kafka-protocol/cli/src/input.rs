//! Reading the input: a file or standard input, as raw bytes or as hex text.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::CliError;

/// Reads all of `path`, or standard input when `path` is `None` or `-`.
pub fn read_all(path: Option<&Path>) -> Result<Vec<u8>, CliError> {
    match path {
        Some(path) if path != Path::new("-") => {
            std::fs::read(path).map_err(|source| CliError::Read {
                what: path.display().to_string(),
                source,
            })
        }
        _ => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .lock()
                .read_to_end(&mut bytes)
                .map_err(|source| CliError::Read {
                    what: "standard input".to_owned(),
                    source,
                })?;
            Ok(bytes)
        }
    }
}

/// Reads the input as bytes: raw, or parsed from hex text when `hex` is set.
pub fn read_bytes(path: Option<&PathBuf>, hex: bool) -> Result<Vec<u8>, CliError> {
    let input = read_all(path.map(PathBuf::as_path))?;
    if hex {
        parse_hex(&input)
    } else {
        Ok(input)
    }
}

/// Parses hex text, upper or lower case, ignoring ASCII whitespace anywhere
/// (so a hex dump split over lines works). Errors name the offending byte's
/// offset in the text.
pub fn parse_hex(text: &[u8]) -> Result<Vec<u8>, CliError> {
    let mut bytes = Vec::with_capacity(text.len() / 2);
    // The high nibble of a byte in progress, and where its digit was.
    let mut pending: Option<(u8, usize)> = None;
    for (offset, &c) in text.iter().enumerate() {
        if c.is_ascii_whitespace() {
            continue;
        }
        let nibble = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => {
                let shown = if c.is_ascii_graphic() {
                    format!("character '{}'", char::from(c))
                } else {
                    format!("byte 0x{c:02x}")
                };
                return Err(CliError::Hex(format!(
                    "unexpected {shown} at offset {offset}"
                )));
            }
        };
        pending = match pending {
            None => Some((nibble, offset)),
            Some((high, _)) => {
                bytes.push(high << 4 | nibble);
                None
            }
        };
    }
    match pending {
        None => Ok(bytes),
        Some((_, offset)) => Err(CliError::Hex(format!(
            "odd number of hex digits (the last one, at offset {offset}, has no pair)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_ignores_whitespace_and_case() {
        assert_eq!(
            parse_hex(b" 0a Ff\n10\t").ok(),
            Some(vec![0x0a, 0xff, 0x10])
        );
        assert_eq!(parse_hex(b"").ok(), Some(vec![]));
    }

    #[test]
    fn hex_errors_name_the_offset() {
        let error = parse_hex(b"00 0g").err().map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some("invalid hex: unexpected character 'g' at offset 4")
        );
        let error = parse_hex(b"000").err().map(|e| e.to_string());
        assert!(error.is_some_and(|e| e.contains("odd number") && e.contains("offset 2")));
    }
}
