//! Kafka's own generator edge-case schemas (`schemas/edge/`, facts only):
//! nullable structs with and without tags, tagged uuids, floats and
//! hex defaults. The generated code must write them the way Kafka does.

use kafka_codegen_example::messages::nullable_struct_message::{MyStruct, MyStruct3};
use kafka_codegen_example::messages::{NullableStructMessage, SimpleExampleMessage};
use kafka_wire::runtime::{JsonForm, Message};

fn round_trip<'a, M>(message: &M, version: i16) -> Vec<u8>
where
    M: Message<'a> + JsonForm + PartialEq + std::fmt::Debug,
{
    let bytes = message
        .to_bytes(version)
        .unwrap_or_else(|e| panic!("v{version}: {e}"));
    assert_eq!(bytes.len(), message.encoded_len(version), "v{version}");
    let json = message.to_json(version);
    let from_json = M::from_json(&json, version).unwrap_or_else(|e| panic!("v{version}: {e}"));
    assert_eq!(&from_json, message, "v{version}: {json}");
    bytes
}

#[test]
fn nullable_structs_use_markers_and_tagged_nulls() {
    let all_null = NullableStructMessage {
        nullable_struct: None,
        nullable_struct2: None,
        nullable_struct3: None,
        nullable_struct4: None,
        ..Default::default()
    };
    // Untagged nullable structs: int8 -1 markers. NullableStruct3 is null by
    // default, so it is skipped; NullableStruct4 defaults to a struct, so its
    // null is written as tag 1, size 1, marker 0.
    let bytes = round_trip(&all_null, 2);
    assert_eq!(bytes, [0xff, 0xff, 1, 1, 1, 0]);
    assert_eq!(
        NullableStructMessage::decode(&bytes, 2).ok().as_ref(),
        Some(&all_null)
    );

    let tagged = NullableStructMessage {
        nullable_struct: Some(MyStruct {
            my_string: "x".into(),
            my_int: 2,
            ..Default::default()
        }),
        nullable_struct3: Some(MyStruct3 {
            my_string: "a".into(),
            my_int: 1,
            ..Default::default()
        }),
        ..Default::default()
    };
    let bytes = round_trip(&tagged, 2);
    // Marker 1 and the struct; NullableStruct2 present; then two tagged fields:
    // tag 0 of size 8 (marker 1 + 7 struct bytes) and nothing for tag 1, which
    // holds its default.
    let expected: &[u8] = &[
        1, 2, b'x', 0, 0, 0, 2, 0, // nullable_struct
        1, 1, 0, 0, 0, 0, 0, // nullable_struct2: empty string, 0, no tags
        1, 0, 8, 1, 2, b'a', 0, 0, 0, 1, 0, // tagged section
    ];
    assert_eq!(bytes, expected);
    assert_eq!(NullableStructMessage::decode(&bytes, 2).ok(), Some(tagged));

    // Version 0 has no marker for NullableStruct2, so null cannot be written.
    let null_in_v0 = NullableStructMessage {
        nullable_struct2: None,
        ..Default::default()
    };
    let error = null_in_v0.to_bytes(0).err().map(|e| e.to_string());
    assert!(
        error
            .as_deref()
            .is_some_and(|e| e.contains("nullable_struct2")),
        "{error:?}"
    );
}

#[test]
fn tagged_defaults_are_skipped_and_others_written() {
    let message = SimpleExampleMessage::default();
    for version in 0..=2 {
        round_trip(&message, version);
    }
    // Every tagged field at its default: an empty tagged section.
    let bytes = round_trip(&message, 1);
    assert_eq!(bytes.last(), Some(&0));
    let changed = SimpleExampleMessage {
        my_float64: 1.5,
        tagged_long: 7,
        ..Default::default()
    };
    let bytes = round_trip(&changed, 2);
    assert!(bytes.len() > round_trip(&message, 2).len());
    assert_eq!(SimpleExampleMessage::decode(&bytes, 2).ok(), Some(changed));
}
