//! The table of docs/fake-cluster.md that says which injected error codes
//! a retrying client retries: Kafka's retriable flag for every code, as
//! kafka-wire's `ErrorCode::is_retriable` carries it. Any difference fails;
//! `KAFKA_WIRE_BLESS=1 cargo test -p kafka-wire-docs --test error_codes`
//! writes the table again.

use std::path::Path;

use kafka_wire::ErrorCode;

const BEGIN: &str = "<!-- error codes: begin (written by KAFKA_WIRE_BLESS=1 cargo test -p kafka-wire-docs --test error_codes) -->\n";
const END: &str = "<!-- error codes: end -->";

/// Every code kafka-wire names but NONE, in code order, as table rows.
fn table() -> String {
    let mut text = String::from("\n| code | name | a retrying client |\n|---:|---|---|\n");
    let codes = (-1..=i16::MAX)
        .take(1000)
        .map(ErrorCode::from_code)
        .filter(|code| !matches!(code, ErrorCode::Unknown(_)) && code.is_error());
    for code in codes {
        let verdict = if code.is_retriable() {
            "retries"
        } else {
            "fails at once"
        };
        text.push_str(&format!(
            "| {} | `{}` | {verdict} |\n",
            code.code(),
            code.name()
        ));
    }
    text.push('\n');
    text
}

#[test]
fn the_guides_table_of_retried_codes_is_kafkas_flag() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/fake-cluster.md");
    let guide =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let start = guide.find(BEGIN).expect("the table's begin marker") + BEGIN.len();
    let end = guide[start..].find(END).expect("the table's end marker") + start;
    let expected = table();
    if std::env::var_os("KAFKA_WIRE_BLESS").is_some() {
        let written = format!("{}{expected}{}", &guide[..start], &guide[end..]);
        std::fs::write(&path, written).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    assert!(
        guide[start..end] == expected,
        "docs/fake-cluster.md's table of error codes differs from kafka-wire's flags: write it \
         again with KAFKA_WIRE_BLESS=1 cargo test -p kafka-wire-docs --test error_codes"
    );
    // The two codes the guide names.
    assert!(expected.contains("| 6 | `NOT_LEADER_OR_FOLLOWER` | retries |"));
    assert!(expected.contains("| 29 | `TOPIC_AUTHORIZATION_FAILED` | fails at once |"));
}
