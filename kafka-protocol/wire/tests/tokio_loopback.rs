//! The tokio codec over a real loopback socket: a client sends request
//! frames, a server reads them with `FramedRead`, decodes each, and answers.

use std::borrow::Cow;

use futures::{SinkExt, StreamExt};
use kafka_wire::codec::FrameCodec;
use kafka_wire::frame::{RequestFrame, ResponseFrame};
use kafka_wire::messages::{
    api_versions_response, ApiVersionsRequest, ApiVersionsResponse, RequestHeader,
};
use kafka_wire::{ApiKey, RequestBody, ResponseBody};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::codec::Framed;

fn request(correlation_id: i32) -> Vec<u8> {
    let frame = RequestFrame {
        header: RequestHeader {
            request_api_key: ApiKey::ApiVersions.key(),
            request_api_version: 3,
            correlation_id,
            client_id: Some(Cow::Borrowed("loopback")),
            ..Default::default()
        },
        body: RequestBody::ApiVersions(ApiVersionsRequest {
            client_software_name: "kafka-wire".into(),
            client_software_version: "test".into(),
            ..Default::default()
        }),
    };
    let mut buf = Vec::new();
    frame.encode(&mut buf).unwrap_or_else(|e| panic!("{e}"));
    buf
}

#[tokio::test]
async fn frames_cross_a_loopback_socket() {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let address = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    let server = tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap_or_else(|e| panic!("{e}"));
        let mut framed = Framed::new(socket, FrameCodec::new(1 << 20));
        let mut seen = Vec::new();
        while let Some(frame) = framed.next().await {
            let frame = frame.unwrap_or_else(|e| panic!("{e}"));
            let request = RequestFrame::decode(&frame).unwrap_or_else(|e| panic!("{e}"));
            seen.push(request.header.correlation_id);
            let response = ResponseFrame {
                header: kafka_wire::messages::ResponseHeader {
                    correlation_id: request.header.correlation_id,
                    ..Default::default()
                },
                body: ResponseBody::ApiVersions(ApiVersionsResponse {
                    api_keys: vec![api_versions_response::ApiVersion {
                        api_key: 18,
                        min_version: 0,
                        max_version: 4,
                        ..Default::default()
                    }]
                    .into(),
                    ..Default::default()
                }),
            };
            let mut out = Vec::new();
            response
                .encode(&mut out, 3)
                .unwrap_or_else(|e| panic!("{e}"));
            framed.send(out).await.unwrap_or_else(|e| panic!("{e}"));
        }
        seen
    });

    let socket = TcpStream::connect(address)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut client = Framed::new(socket, FrameCodec::default());
    for id in 1..=3 {
        client
            .send(request(id))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let reply = client
            .next()
            .await
            .and_then(Result::ok)
            .unwrap_or_else(|| panic!("no reply"));
        let response =
            ResponseFrame::decode(&reply, ApiKey::ApiVersions, 3).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(response.header.correlation_id, id);
    }
    drop(client);
    assert_eq!(
        server.await.unwrap_or_else(|e| panic!("{e}")),
        vec![1, 2, 3]
    );
}

#[tokio::test]
async fn an_oversized_frame_is_refused() {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let address = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    let server = tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap_or_else(|e| panic!("{e}"));
        let mut framed = Framed::new(socket, FrameCodec::new(64));
        framed.next().await.map(|r| r.map(|_| ()))
    });
    let mut socket = TcpStream::connect(address)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    tokio::io::AsyncWriteExt::write_all(&mut socket, &[0x7f, 0xff, 0xff, 0xff])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let result = server.await.unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(
        result,
        Some(Err(kafka_wire::codec::FrameCodecError::TooLarge { .. }))
    ));
}
