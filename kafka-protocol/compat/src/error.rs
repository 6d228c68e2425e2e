//! The errors of the package, one enum per job.

use kafka_wire::runtime::JsonError;

use crate::side::Side;

/// A JSON path that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("path `{path}`: {why}")]
pub struct PathError {
    /// The path as written.
    pub path: String,
    /// What is wrong with it.
    pub why: String,
}

/// A placeholder that cannot be filled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// No value is bound to the name.
    #[error("`{template}`: nothing is bound to `{name}`")]
    Unbound {
        /// The string holding the placeholder.
        template: String,
        /// The name.
        name: String,
    },
    /// A placeholder inside a longer string is bound to something that is
    /// not a string or a number.
    #[error("`{template}`: `{name}` is {value}, which cannot be written inside a string")]
    NotText {
        /// The string holding the placeholder.
        template: String,
        /// The name.
        name: String,
        /// The value bound.
        value: String,
    },
    /// `${NAME + N}` of a value that is not an integer (or overflows).
    #[error("`{template}`: `{name}` is {value}, which is not an integer to add to")]
    NotInteger {
        /// The string holding the placeholder.
        template: String,
        /// The name.
        name: String,
        /// The value bound.
        value: String,
    },
    /// Not a placeholder the grammar knows.
    #[error("`{template}`: {why}")]
    Malformed {
        /// The string.
        template: String,
        /// What is wrong.
        why: String,
    },
}

/// A request body that cannot be built from its JSON form.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BodyError {
    /// A placeholder could not be filled.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// The JSON does not fit the request at this version, with its path.
    #[error("{api} v{version}: {error}")]
    Json {
        /// The api.
        api: &'static str,
        /// The version.
        version: i16,
        /// Why, with the JSON path.
        error: JsonError,
    },
}

/// Case data that is not valid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CaseError {
    /// The data does not parse.
    #[error("{what}: {why}")]
    Data {
        /// Which data (a file name, an api).
        what: String,
        /// Why.
        why: String,
    },
    /// A placeholder in the data is malformed.
    #[error("{what}: {error}")]
    Template {
        /// Which data.
        what: String,
        /// The fault.
        error: TemplateError,
    },
}

/// A line of an allow file that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {why}")]
pub struct AllowError {
    /// The line, from 1.
    pub line: usize,
    /// What is wrong.
    pub why: String,
}

/// Why a run could not compare at all: a side could not be reached or
/// would not bootstrap (connect, ApiVersions, Metadata, SASL).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the {side} ({address}) cannot be reached: {why}")]
pub struct Unreachable {
    /// Which side.
    pub side: Side,
    /// Its bootstrap address.
    pub address: String,
    /// What failed.
    pub why: String,
}
