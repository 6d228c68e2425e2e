//! The workloads of `kafka-wire-benches` on the other peers: kacrab-protocol
//! 0.4 (owned decode) and krabka-protocol 0.8 (owned decode, and borrowed
//! zero-copy decode), beside kafka-wire ("ours") and kafka-protocol 0.18
//! ("peer"), on the same bytes.
//!
//! This crate is outside the kafka-wire workspace: krabka-protocol declares
//! rust-version 1.98.1 and is built here with `--ignore-rust-version`, which
//! the workspace's own build must not need. `benches/run` drives it.
//!
//! [`Peers`] extends [`Workload`] with each of these crates' decode, encode
//! and read; [`check_peers`] proves that every crate decodes the workload's
//! bytes, reads the same checksum from them and re-encodes them to the same
//! bytes; [`for_each_workload`] visits the workloads in report order.

use bytes::{Bytes, BytesMut};
use kafka_wire_benches::{
    ApiVersionsV4, FetchV18Large, FetchV18Small, FetchV18Tiny, HeaderDispatchMetadataV13,
    MetadataV13, ProduceV13, VoteV2PreVote, Workload,
};
use krabka_protocol::{Decode, DecodeBorrow, Encode};

pub mod read;

/// The crates every workload runs on, in report order, as the benchmarks and
/// reports name them: `peer` is kafka-protocol 0.18.
pub const CRATES: [&str; 5] = ["ours", "peer", "kacrab", "krabka-owned", "krabka-borrowed"];

/// A workload on kacrab-protocol and krabka-protocol, beside ours and
/// kafka-protocol's ([`Workload`]).
pub trait Peers: Workload {
    /// kacrab-protocol's decoded value (owned; byte fields share the input
    /// `Bytes`).
    type Kacrab;
    /// krabka-protocol's owned decoded value.
    type KrabkaOwned;
    /// krabka-protocol's borrowed decoded value.
    type KrabkaBorrowed<'a>;
    /// Decodes a clone of `wire` with kacrab-protocol.
    fn decode_kacrab(wire: &Bytes) -> Self::Kacrab;
    /// Encodes with kacrab-protocol into a buffer pre-sized from its computed
    /// size.
    fn encode_kacrab(value: &Self::Kacrab) -> BytesMut;
    /// [`Workload::read_ours`] with kacrab-protocol.
    fn read_kacrab(value: &Self::Kacrab) -> u64;
    /// Decodes a clone of `wire` with krabka-protocol's owned types.
    fn decode_krabka_owned(wire: &Bytes) -> Self::KrabkaOwned;
    /// Encodes krabka-protocol's owned value into a pre-sized buffer.
    fn encode_krabka_owned(value: &Self::KrabkaOwned) -> BytesMut;
    /// [`Workload::read_ours`] with krabka-protocol's owned value.
    fn read_krabka_owned(value: &Self::KrabkaOwned) -> u64;
    /// Decodes `wire` with krabka-protocol's borrowed types.
    fn decode_krabka_borrowed(wire: &[u8]) -> Self::KrabkaBorrowed<'_>;
    /// Encodes krabka-protocol's borrowed value into a pre-sized buffer.
    fn encode_krabka_borrowed(value: &Self::KrabkaBorrowed<'_>) -> BytesMut;
    /// [`Workload::read_ours`] with krabka-protocol's borrowed value.
    fn read_krabka_borrowed(value: &Self::KrabkaBorrowed<'_>) -> u64;
}

/// Something done once per workload, with every crate's types.
pub trait Visitor {
    /// Called once for each workload, in report order.
    fn visit<W: Peers>(&mut self);
}

/// Calls `visitor` for every workload, in the order of
/// `kafka_wire_benches::for_each_workload`.
pub fn for_each_workload<V: Visitor>(visitor: &mut V) {
    visitor.visit::<MetadataV13>();
    visitor.visit::<FetchV18Large>();
    visitor.visit::<FetchV18Small>();
    visitor.visit::<FetchV18Tiny>();
    visitor.visit::<ProduceV13>();
    visitor.visit::<VoteV2PreVote>();
    visitor.visit::<ApiVersionsV4>();
    visitor.visit::<HeaderDispatchMetadataV13>();
}

/// Checks what `kafka_wire_benches::check_roundtrip` checks for ours and
/// kafka-protocol, then that kacrab-protocol and both flavours of
/// krabka-protocol decode `W`'s bytes, read the same checksum as ours, and
/// re-encode them to the identical bytes. Returns the wire size; panics with
/// the workload's and the crate's names otherwise.
pub fn check_peers<W: Peers>() -> usize {
    let len = kafka_wire_benches::check_roundtrip::<W>();
    let wire = W::wire();
    let expected = W::read_ours(&W::decode_ours(&wire));
    let check = |name: &str, read: u64, encoded: &[u8]| {
        assert_eq!(read, expected, "{}: {name} reads other values", W::NAME);
        assert!(
            encoded == &wire[..],
            "{}: {name} re-encoded {} bytes, differing from the {} wire bytes",
            W::NAME,
            encoded.len(),
            wire.len()
        );
    };
    let kacrab = W::decode_kacrab(&wire);
    check(
        "kacrab",
        W::read_kacrab(&kacrab),
        &W::encode_kacrab(&kacrab),
    );
    let owned = W::decode_krabka_owned(&wire);
    check(
        "krabka-owned",
        W::read_krabka_owned(&owned),
        &W::encode_krabka_owned(&owned),
    );
    let borrowed = W::decode_krabka_borrowed(&wire);
    check(
        "krabka-borrowed",
        W::read_krabka_borrowed(&borrowed),
        &W::encode_krabka_borrowed(&borrowed),
    );
    len
}

/// Encodes a krabka-protocol value (either flavour) into a buffer of exactly
/// its computed size.
#[inline]
fn encode_krabka<M: Encode>(message: &M, version: i16) -> BytesMut {
    let mut buf = BytesMut::with_capacity(message.encoded_len(version));
    message.encode(&mut buf, version).expect("krabka encodes");
    buf
}

/// Decodes with krabka-protocol's owned types from a clone of `wire` (so
/// that its byte fields can share the input, as kafka-protocol's do).
#[inline]
fn decode_krabka_owned<M: for<'de> Decode<'de>>(wire: &Bytes, version: i16) -> M {
    M::decode(&mut wire.clone(), version).expect("krabka decodes")
}

/// Decodes with krabka-protocol's borrowed types.
#[inline]
fn decode_krabka_borrowed<'a, M: DecodeBorrow<'a>>(wire: &'a [u8], version: i16) -> M {
    let mut input = wire;
    M::decode_borrow(&mut input, version).expect("krabka decodes borrowed")
}

/// Encodes a kacrab-protocol message into a buffer of exactly its size.
macro_rules! encode_kacrab {
    ($value:expr, $version:expr) => {{
        let value = $value;
        let mut buf =
            BytesMut::with_capacity(value.encoded_len($version).expect("kacrab computes size"));
        value.write(&mut buf, $version).expect("kacrab encodes");
        buf
    }};
}

/// [`Peers`] for a workload that is one message at one version.
macro_rules! peers {
    (
        $workload:ty,
        kacrab $kacrab:ty, krabka owned $owned:ty, borrowed $borrowed:ty,
        read $read_kacrab:path, $read_owned:path, $read_borrowed:path
    ) => {
        impl Peers for $workload {
            type Kacrab = $kacrab;
            type KrabkaOwned = $owned;
            type KrabkaBorrowed<'a> = $borrowed;

            #[inline]
            fn decode_kacrab(wire: &Bytes) -> Self::Kacrab {
                <$kacrab>::read(&mut wire.clone(), Self::VERSION).expect("kacrab decodes")
            }

            #[inline]
            fn encode_kacrab(value: &Self::Kacrab) -> BytesMut {
                encode_kacrab!(value, Self::VERSION)
            }

            #[inline]
            fn read_kacrab(value: &Self::Kacrab) -> u64 {
                $read_kacrab(value)
            }

            #[inline]
            fn decode_krabka_owned(wire: &Bytes) -> Self::KrabkaOwned {
                decode_krabka_owned(wire, Self::VERSION)
            }

            #[inline]
            fn encode_krabka_owned(value: &Self::KrabkaOwned) -> BytesMut {
                encode_krabka(value, Self::VERSION)
            }

            #[inline]
            fn read_krabka_owned(value: &Self::KrabkaOwned) -> u64 {
                $read_owned(value)
            }

            #[inline]
            fn decode_krabka_borrowed(wire: &[u8]) -> Self::KrabkaBorrowed<'_> {
                decode_krabka_borrowed(wire, Self::VERSION)
            }

            #[inline]
            fn encode_krabka_borrowed(value: &Self::KrabkaBorrowed<'_>) -> BytesMut {
                encode_krabka(value, Self::VERSION)
            }

            #[inline]
            fn read_krabka_borrowed(value: &Self::KrabkaBorrowed<'_>) -> u64 {
                $read_borrowed(value)
            }
        }
    };
}

use kacrab_protocol::generated as kacrab;
use krabka_protocol::{borrowed, owned};

peers! {
    MetadataV13,
    kacrab kacrab::MetadataResponseData,
    krabka owned owned::metadata_response::MetadataResponse,
    borrowed borrowed::metadata_response::MetadataResponse<'a>,
    read read::metadata_kacrab, read::metadata_krabka_owned, read::metadata_krabka_borrowed
}

peers! {
    FetchV18Large,
    kacrab kacrab::FetchResponseData,
    krabka owned owned::fetch_response::FetchResponse,
    borrowed borrowed::fetch_response::FetchResponse<'a>,
    read read::fetch_kacrab, read::fetch_krabka_owned, read::fetch_krabka_borrowed
}

peers! {
    FetchV18Small,
    kacrab kacrab::FetchResponseData,
    krabka owned owned::fetch_response::FetchResponse,
    borrowed borrowed::fetch_response::FetchResponse<'a>,
    read read::fetch_kacrab, read::fetch_krabka_owned, read::fetch_krabka_borrowed
}

peers! {
    FetchV18Tiny,
    kacrab kacrab::FetchResponseData,
    krabka owned owned::fetch_response::FetchResponse,
    borrowed borrowed::fetch_response::FetchResponse<'a>,
    read read::fetch_kacrab, read::fetch_krabka_owned, read::fetch_krabka_borrowed
}

peers! {
    ProduceV13,
    kacrab kacrab::ProduceRequestData,
    krabka owned owned::produce_request::ProduceRequest,
    borrowed borrowed::produce_request::ProduceRequest<'a>,
    read read::produce_kacrab, read::produce_krabka_owned, read::produce_krabka_borrowed
}

peers! {
    VoteV2PreVote,
    kacrab kacrab::VoteRequestData,
    krabka owned owned::vote_request::VoteRequest,
    borrowed borrowed::vote_request::VoteRequest<'a>,
    read read::vote_kacrab, read::vote_krabka_owned, read::vote_krabka_borrowed
}

peers! {
    ApiVersionsV4,
    kacrab kacrab::ApiVersionsResponseData,
    krabka owned owned::api_versions_response::ApiVersionsResponse,
    // krabka's borrowed ApiVersionsResponse borrows nothing: its feature
    // lists are of the owned element types.
    borrowed borrowed::api_versions_response::ApiVersionsResponse,
    read read::api_versions_kacrab, read::api_versions_krabka_owned,
    read::api_versions_krabka_borrowed
}

/// The header version of a Metadata v13 request.
const REQUEST_HEADER_VERSION: i16 = 2;
/// The api key of Metadata.
const METADATA_KEY: i16 = 3;

/// As kafka-protocol does in `kafka_wire_benches`: each peer decodes the
/// request header, then the body its api key names.
impl Peers for HeaderDispatchMetadataV13 {
    type Kacrab = (kacrab::RequestHeaderData, kacrab::MetadataRequestData);
    type KrabkaOwned = (
        owned::request_header::RequestHeader,
        owned::metadata_request::MetadataRequest,
    );
    type KrabkaBorrowed<'a> = (
        borrowed::request_header::RequestHeader<'a>,
        borrowed::metadata_request::MetadataRequest<'a>,
    );

    #[inline]
    fn decode_kacrab(wire: &Bytes) -> Self::Kacrab {
        let mut buf = wire.clone();
        let header = kacrab::RequestHeaderData::read(&mut buf, REQUEST_HEADER_VERSION)
            .expect("kacrab decodes the header");
        let body = match header.request_api_key {
            METADATA_KEY => kacrab::MetadataRequestData::read(&mut buf, header.request_api_version)
                .expect("kacrab decodes the body"),
            key => panic!("unexpected api key {key}"),
        };
        (header, body)
    }

    #[inline]
    fn encode_kacrab((header, body): &Self::Kacrab) -> BytesMut {
        let version = header.request_api_version;
        let size = header
            .encoded_len(REQUEST_HEADER_VERSION)
            .expect("kacrab computes size")
            + body.encoded_len(version).expect("kacrab computes size");
        let mut buf = BytesMut::with_capacity(size);
        header
            .write(&mut buf, REQUEST_HEADER_VERSION)
            .expect("kacrab encodes");
        body.write(&mut buf, version).expect("kacrab encodes");
        buf
    }

    #[inline]
    fn read_kacrab(value: &Self::Kacrab) -> u64 {
        read::metadata_request_frame_kacrab(value)
    }

    #[inline]
    fn decode_krabka_owned(wire: &Bytes) -> Self::KrabkaOwned {
        let mut buf = wire.clone();
        let header = owned::request_header::RequestHeader::decode(&mut buf, REQUEST_HEADER_VERSION)
            .expect("krabka decodes the header");
        let body = match header.request_api_key {
            METADATA_KEY => owned::metadata_request::MetadataRequest::decode(
                &mut buf,
                header.request_api_version,
            )
            .expect("krabka decodes the body"),
            key => panic!("unexpected api key {key}"),
        };
        (header, body)
    }

    #[inline]
    fn encode_krabka_owned((header, body): &Self::KrabkaOwned) -> BytesMut {
        encode_krabka_frame(header, body, header.request_api_version)
    }

    #[inline]
    fn read_krabka_owned(value: &Self::KrabkaOwned) -> u64 {
        read::metadata_request_frame_krabka_owned(value)
    }

    #[inline]
    fn decode_krabka_borrowed(wire: &[u8]) -> Self::KrabkaBorrowed<'_> {
        let mut buf = wire;
        let header = borrowed::request_header::RequestHeader::decode_borrow(
            &mut buf,
            REQUEST_HEADER_VERSION,
        )
        .expect("krabka decodes the header");
        let body = match header.request_api_key {
            METADATA_KEY => borrowed::metadata_request::MetadataRequest::decode_borrow(
                &mut buf,
                header.request_api_version,
            )
            .expect("krabka decodes the body"),
            key => panic!("unexpected api key {key}"),
        };
        (header, body)
    }

    #[inline]
    fn encode_krabka_borrowed((header, body): &Self::KrabkaBorrowed<'_>) -> BytesMut {
        encode_krabka_frame(header, body, header.request_api_version)
    }

    #[inline]
    fn read_krabka_borrowed(value: &Self::KrabkaBorrowed<'_>) -> u64 {
        read::metadata_request_frame_krabka_borrowed(value)
    }
}

/// Encodes a request header and its body with krabka-protocol into a buffer
/// of exactly their size.
#[inline]
fn encode_krabka_frame<H: Encode, B: Encode>(header: &H, body: &B, version: i16) -> BytesMut {
    let size = header.encoded_len(REQUEST_HEADER_VERSION) + body.encoded_len(version);
    let mut buf = BytesMut::with_capacity(size);
    header
        .encode(&mut buf, REQUEST_HEADER_VERSION)
        .expect("krabka encodes");
    body.encode(&mut buf, version).expect("krabka encodes");
    buf
}
