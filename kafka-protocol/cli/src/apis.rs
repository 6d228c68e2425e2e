//! Choosing an API from `--api`/`--version`, and the `apis` command.

use kafka_wire::ApiKey;
use serde::Serialize;

use crate::error::CliError;
use crate::output::Output;

/// The API named by `name`: a message name without its Request/Response
/// suffix, in any case (`Vote`, `apiversions`), or a numeric key (`52`).
pub fn resolve_api(name: &str) -> Result<ApiKey, CliError> {
    let trimmed = name.trim();
    let found = match trimmed.parse::<i16>() {
        Ok(key) => ApiKey::from_key(key),
        Err(_) => ApiKey::from_name(trimmed),
    };
    found.ok_or_else(|| CliError::UnknownApi(name.to_owned()))
}

/// Checks that `api` has `version`, unstable versions included.
pub fn check_version(api: ApiKey, version: i16) -> Result<(), CliError> {
    if api.supports_version(version) {
        Ok(())
    } else {
        Err(CliError::UnsupportedVersion {
            api: api.name(),
            version,
            lowest: api.lowest_version(),
            highest: api.highest_version(),
        })
    }
}

/// Resolves an API named as `--api` takes it and checks `version`
/// against it.
pub fn resolve(name: &str, version: i16) -> Result<(ApiKey, i16), CliError> {
    let api = resolve_api(name)?;
    check_version(api, version)?;
    Ok((api, version))
}

/// One row of the `apis` table.
#[derive(Serialize)]
struct ApiRow {
    key: i16,
    name: &'static str,
    min: i16,
    /// Includes an unstable latest version.
    max: i16,
    /// The first flexible version, if any.
    flexible: Option<i16>,
    /// Whether `max` is still unstable.
    unstable: bool,
}

impl ApiRow {
    fn new(api: ApiKey) -> Self {
        ApiRow {
            key: api.key(),
            name: api.name(),
            min: api.lowest_version(),
            max: api.highest_version(),
            flexible: api.first_flexible_version(),
            unstable: api.latest_version_unstable(),
        }
    }
}

/// Prints every API, in key order: a tab-separated table with a header
/// line, or (`json`) an array of objects with the same keys, where a missing
/// flexible version is `null` rather than `-`.
pub fn run(json: bool, compact: bool, out: &mut Output) -> Result<(), CliError> {
    let mut rows: Vec<ApiRow> = ApiKey::ALL.into_iter().map(ApiRow::new).collect();
    rows.sort_by_key(|row| row.key);
    if json {
        return out.json(&rows, compact);
    }
    out.line("key\tname\tmin\tmax\tflexible\tunstable")?;
    for row in &rows {
        let flexible = row
            .flexible
            .map_or_else(|| "-".to_owned(), |v| v.to_string());
        out.line(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}",
            row.key, row.name, row.min, row.max, flexible, row.unstable
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_keys_resolve() {
        assert_eq!(resolve_api("vote").ok(), Some(ApiKey::Vote));
        assert_eq!(resolve_api("VoteRequest").ok(), Some(ApiKey::Vote));
        assert_eq!(resolve_api("52").ok(), Some(ApiKey::Vote));
        assert_eq!(resolve_api("ApiVersions").ok(), Some(ApiKey::ApiVersions));
        assert!(resolve_api("Nope").is_err());
        assert!(resolve_api("9999").is_err());
        assert!(check_version(ApiKey::Vote, 2).is_ok());
        assert!(check_version(ApiKey::Vote, 3).is_err());
    }
}
