//! Allow lists: differences a user accepts, each with its reason.
//!
//! One entry per line: a case pattern, a field pattern and the reason,
//! separated by whitespace (the reason is the rest of the line, and may
//! not be empty). `#` starts a comment line; blank lines are skipped. In
//! patterns, `*` stands for any run of characters (`/`, `.` and brackets
//! included), every other character for itself. The field pattern is
//! matched against a difference's path (`topics[0].partitions[0].errorCode`;
//! the empty path, the whole answer, is matched by `*` alone):
//!
//! ```text
//! # case                      field                       reason
//! surface/api/Envelope        *                           forwarded by brokers to controllers only
//! sweep/Metadata/*            topics[*].topicAuthorizedOperations   no authorizer on the candidate
//! ```
//!
//! A case whose every difference an entry matches has the verdict
//! `allowed`; the report lists entries that matched nothing.

use crate::error::AllowError;

/// One entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowEntry {
    /// The case pattern.
    pub case: String,
    /// The field pattern.
    pub field: String,
    /// Why the difference is accepted.
    pub reason: String,
    /// Its line in the file, from 1.
    pub line: usize,
}

impl AllowEntry {
    /// Whether this entry allows a difference at `path` in case `case`.
    pub fn allows(&self, case: &str, path: &str) -> bool {
        glob(&self.case, case) && glob(&self.field, path)
    }
}

/// A parsed allow list.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AllowList {
    entries: Vec<AllowEntry>,
}

impl AllowList {
    /// An empty list.
    pub fn new() -> AllowList {
        AllowList::default()
    }

    /// Parses the text of an allow file.
    pub fn parse(text: &str) -> Result<AllowList, AllowError> {
        let mut entries = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fault = |why: &str| AllowError {
                line: i + 1,
                why: why.to_owned(),
            };
            let mut rest = line;
            let mut word = || {
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                let (word, after) = rest.split_at(end);
                rest = after.trim_start();
                word
            };
            let case = word();
            let field = word();
            let reason = rest.trim_end();
            if field.is_empty() {
                return Err(fault(
                    "expected a case pattern, a field pattern and a reason",
                ));
            }
            if reason.is_empty() {
                return Err(fault("every entry needs a reason after its two patterns"));
            }
            entries.push(AllowEntry {
                case: case.to_owned(),
                field: field.to_owned(),
                reason: reason.to_owned(),
                line: i + 1,
            });
        }
        Ok(AllowList { entries })
    }

    /// The entries, in file order.
    pub fn entries(&self) -> &[AllowEntry] {
        &self.entries
    }

    /// The first entry that allows a difference at `path` of `case`.
    pub fn find(&self, case: &str, path: &str) -> Option<&AllowEntry> {
        self.entries.iter().find(|e| e.allows(case, path))
    }
}

/// Whether `text` matches `pattern`, where `*` is any run of characters.
pub fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == text;
    };
    if parts.len() == 1 {
        return pattern == text;
    }
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_parse_with_their_reasons() {
        let list = AllowList::parse(
            "# header\n\nsurface/api/Envelope  *  controllers only\n\
             sweep/Metadata/*\tbrokers[*].rack   the fake has no racks  \n",
        )
        .unwrap();
        assert_eq!(list.entries().len(), 2);
        assert_eq!(list.entries()[1].reason, "the fake has no racks");
        assert_eq!(list.entries()[1].line, 4);
        assert!(list.find("surface/api/Envelope", "").is_some());
        assert!(list
            .find("sweep/Metadata/v12/default", "brokers[0].rack")
            .is_some());
        assert!(list
            .find("sweep/Metadata/v12/default", "brokers[0].host")
            .is_none());
        for bad in ["only-a-case", "case field", "case field   "] {
            let error = AllowList::parse(bad).unwrap_err();
            assert_eq!(error.line, 1, "{bad}");
        }
    }

    #[test]
    fn stars_match_any_run() {
        assert!(glob("*", ""));
        assert!(glob("*", "a.b[0]"));
        assert!(glob("a*c", "abbbc"));
        assert!(glob("a*c", "ac"));
        assert!(!glob("a*c", "ab"));
        assert!(glob("*.errorCode", "topics[0].errorCode"));
        assert!(!glob("*.errorCode", "errorCode"));
        assert!(glob("a*b*c", "a-b-c"));
        assert!(!glob("a*b*c", "a-c-b"));
        assert!(glob("abc", "abc"));
        assert!(!glob("abc", "abcd"));
        assert!(!glob("ab*ba", "aba"));
    }
}
