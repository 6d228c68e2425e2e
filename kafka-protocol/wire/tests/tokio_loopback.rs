//! The tokio codec over a real loopback socket: a client sends request
//! frames, a server reads them with `FramedRead`, decodes each, and answers.

use std::borrow::Cow;

use futures::{SinkExt, StreamExt};
use kafka_wire::frame::FrameCodec;
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
                version: 3,
            };
            let mut out = Vec::new();
            response.encode(&mut out).unwrap_or_else(|e| panic!("{e}"));
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
        Some(Err(kafka_wire::frame::FrameCodecError::TooLarge { .. }))
    ));
}

/// The server that [`size_prefixes_alone_on_many_connections_leave_the_codec_serving_others`]
/// starts in a child process of this test binary, under an address-space
/// limit: it echoes every frame it reads with [`FrameCodec`].
#[tokio::test]
#[ignore = "a server for the size-prefix flood test, which runs it in a child process"]
async fn frame_echo_server() {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let address = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    println!("listening on {address}");
    loop {
        let (socket, _) = listener.accept().await.unwrap_or_else(|e| panic!("{e}"));
        tokio::spawn(async move {
            let mut framed = Framed::new(socket, FrameCodec::default());
            while let Some(Ok(frame)) = framed.next().await {
                if framed.send(frame).await.is_err() {
                    return;
                }
            }
        });
    }
}

/// Sixty connections that each send only a size prefix claiming 100 MiB, to
/// a server reading with [`FrameCodec`] whose address space is limited to
/// 1 GiB: the codec reserves only what arrives, so the server stays up and
/// keeps echoing another client's frames.
#[test]
fn size_prefixes_alone_on_many_connections_leave_the_codec_serving_others() {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::process::Stdio;

    use kafka_wire_test_support::attack::{
        flood_with_size_prefixes, with_address_space_limit, ADDRESS_SPACE_LIMIT,
    };

    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
    let mut server = with_address_space_limit(&exe, ADDRESS_SPACE_LIMIT)
        .args(["frame_echo_server", "--exact", "--ignored", "--nocapture"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut lines = BufReader::new(server.stdout.take().unwrap_or_else(|| panic!("stdout")));
    let address = loop {
        let mut line = String::new();
        let read = lines.read_line(&mut line).unwrap_or_else(|e| panic!("{e}"));
        assert!(read > 0, "the echo server stopped before listening");
        if let Some(address) = line.trim().strip_prefix("listening on ") {
            break address.to_owned();
        }
    };
    let echo = |stream: &mut std::net::TcpStream| {
        let frame = [0, 0, 0, 3, b'a', b'b', b'c'];
        stream.write_all(&frame).unwrap_or_else(|e| panic!("{e}"));
        let mut back = [0u8; 7];
        stream
            .read_exact(&mut back)
            .unwrap_or_else(|e| panic!("no echo: {e}"));
        assert_eq!(back, frame);
    };
    let flood = flood_with_size_prefixes(&address, 60, echo);
    let mut client = std::net::TcpStream::connect(&address).unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..3 {
        echo(&mut client);
    }
    let alive = server.try_wait().ok().flatten().is_none();
    let _ = server.kill();
    let _ = server.wait();
    drop(flood);
    assert!(alive, "the echo server exited under the flood");
}
