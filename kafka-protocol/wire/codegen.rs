//! How kafka-wire's messages are generated: one home for the settings that
//! the build script (with the `regenerate` feature) and the test of the
//! shipped source (`tests/generated_source.rs`) both use.
//!
//! Every API is generated, each behind a feature of its own named as the
//! API in kebab-case (`produce`, `api-versions`), what needs one API behind
//! the build script's `kafka_apis`, the KRaft records behind
//! `metadata-records` and the JSON form behind `json`, so that one set of
//! files serves every feature combination. (`client-apis` and
//! `controller-apis` enable the features of their listeners' APIs, in
//! `Cargo.toml`.)

use std::path::Path;

use kafka_codegen::{Config, Layout};

/// Where the shipped generated source lives, from the package root.
pub const SHIPPED: &str = "src/messages";

/// The error-code table, from the package root.
pub const ERROR_CODES: &str = "error_codes.tsv";

/// The generated error-code enum, from the package root.
pub const ERROR_CODE_SOURCE: &str = "src/error_code.rs";

/// The generator's settings for the package at `package`, writing files
/// laid out as `layout` says.
pub fn config(package: &Path, layout: Layout) -> Config {
    let mut config = Config::new();
    config
        .schema_dir(package.join("messages"))
        .runtime_path("crate::runtime")
        .layout(layout)
        .gate_each_api(r#"feature = "{api}""#)
        .gate_any_api("kafka_apis")
        .gate_metadata_records(r#"feature = "metadata-records""#)
        .gate_json_form(r#"feature = "json""#)
        .inline_unless(r#"feature = "precompile""#)
        .require_docs(true);
    config
}
