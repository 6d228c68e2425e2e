//! A hostile candidate: a proxy in front of the fake cluster that, for one
//! api, claims a 2 GiB frame, answers another correlation id, sends
//! garbage, closes the connection or never answers. Each becomes a
//! difference of that api's cases, and the run goes on to the end.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use kafka_wire::ApiKey;
use kafka_wire_compat::driver::{run_blocking, unix_ms, DriverConfig};
use kafka_wire_compat::engine::{Config, Engine};
use kafka_wire_compat::report::{Report, Verdict};
use kafka_wire_fake::FakeCluster;

/// What the proxy does to the answers of the api it targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hostility {
    /// A size prefix of 2 GiB - 1, then nothing.
    HugeFrame,
    /// The answer, under another correlation id.
    WrongCorrelation,
    /// A frame of the right correlation id and bytes that decode as nothing.
    Garbage,
    /// The connection closed instead of an answer.
    Close,
    /// No answer at all.
    Stall,
}

fn read_frame(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut size = [0u8; 4];
    stream.read_exact(&mut size).ok()?;
    let mut frame = vec![0u8; usize::try_from(i32::from_be_bytes(size)).ok()?];
    stream.read_exact(&mut frame).ok()?;
    Some(frame)
}

fn write_frame(stream: &mut TcpStream, frame: &[u8]) -> Option<()> {
    let size = i32::try_from(frame.len()).ok()?;
    let mut bytes = size.to_be_bytes().to_vec();
    bytes.extend_from_slice(frame);
    stream.write_all(&bytes).ok()
}

/// Serves one client connection: every request to `upstream`, every answer
/// back, but those to `target` treated as `hostility` says.
fn serve(mut client: TcpStream, upstream: String, target: ApiKey, hostility: Hostility) {
    let Ok(mut broker) = TcpStream::connect(&upstream) else {
        return;
    };
    let _ = (client.set_nodelay(true), broker.set_nodelay(true));
    while let Some(request) = read_frame(&mut client) {
        let api = request.get(..2).map(|k| i16::from_be_bytes([k[0], k[1]]));
        if write_frame(&mut broker, &request).is_none() {
            return;
        }
        let Some(mut answer) = read_frame(&mut broker) else {
            return;
        };
        if api != Some(target.key()) {
            if write_frame(&mut client, &answer).is_none() {
                return;
            }
            continue;
        }
        match hostility {
            Hostility::HugeFrame => {
                let _ = client.write_all(&i32::MAX.to_be_bytes());
                std::thread::sleep(Duration::from_secs(30));
                return;
            }
            Hostility::WrongCorrelation => {
                answer[3] = answer[3].wrapping_add(1);
                let _ = write_frame(&mut client, &answer);
            }
            Hostility::Garbage => {
                let mut garbage = answer[..4].to_vec();
                garbage.extend_from_slice(&[0xff; 7]);
                let _ = write_frame(&mut client, &garbage);
            }
            Hostility::Close => {
                let _ = client.shutdown(Shutdown::Both);
                return;
            }
            Hostility::Stall => {
                std::thread::sleep(Duration::from_secs(30));
                return;
            }
        }
    }
}

/// A proxy in front of `upstream`; its address.
fn hostile_proxy(upstream: String, target: ApiKey, hostility: Hostility) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let address = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let upstream = upstream.clone();
            std::thread::spawn(move || serve(client, upstream, target, hostility));
        }
    });
    address
}

fn compare(reference: &str, candidate: &str) -> Report {
    let mut config = Config::new(reference, candidate);
    config.apis = vec![ApiKey::DescribeCluster, ApiKey::Metadata];
    config.scenarios = Vec::new();
    config.timeout = Duration::from_millis(400);
    let engine = Engine::new(config, Instant::now(), unix_ms());
    run_blocking(engine, &DriverConfig::default(), |_| {})
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn each_hostile_answer_is_a_difference_of_its_case_and_the_run_goes_on() {
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let (reference, candidate) = runtime.block_on(async {
        let a = FakeCluster::builder().brokers(1).start().await;
        let b = FakeCluster::builder().brokers(1).start().await;
        (a, b)
    });
    let reference = reference.unwrap_or_else(|e| panic!("{e}"));
    let candidate = candidate.unwrap_or_else(|e| panic!("{e}"));
    for (hostility, expected) in [
        (
            Hostility::HugeFrame,
            "<a bad frame: a frame of 2147483647 bytes, more than the 67108864 allowed>",
        ),
        (Hostility::WrongCorrelation, "<answered correlation id "),
        (Hostility::Garbage, "<an answer that does not decode: "),
        (Hostility::Close, "<closed the connection>"),
        (Hostility::Stall, "<no answer in time>"),
    ] {
        let proxy = hostile_proxy(candidate.bootstrap(), ApiKey::DescribeCluster, hostility);
        let started = Instant::now();
        let report = compare(&reference.bootstrap(), &proxy);
        let sweep: Vec<_> = report
            .cases
            .iter()
            .filter(|c| c.case.starts_with("sweep/DescribeCluster/"))
            .collect();
        assert!(sweep.len() >= 4, "{hostility:?}: {:?}", report.cases);
        for case in sweep {
            assert_eq!(case.verdict, Verdict::Differ, "{hostility:?}: {case:?}");
            assert_eq!(case.differences.len(), 1, "{hostility:?}: {case:?}");
            let difference = &case.differences[0];
            assert_eq!(difference.path, "");
            assert!(difference.reference.is_object(), "{hostility:?}: {case:?}");
            let got = difference.candidate.as_str().unwrap_or_default();
            assert!(got.starts_with(expected), "{hostility:?}: {got}");
        }
        // The run went on: the Metadata cases after them compare the same,
        // and the surface too.
        let rest: Vec<_> = report
            .cases
            .iter()
            .filter(|c| !c.case.starts_with("sweep/DescribeCluster/"))
            .collect();
        assert!(rest.len() > 20, "{hostility:?}");
        assert!(
            rest.iter().all(|c| c.verdict == Verdict::Same),
            "{hostility:?}: {:?}",
            rest.iter().find(|c| c.verdict != Verdict::Same)
        );
        // Each case is bounded by its timeout: a stall costs it, no more.
        assert!(started.elapsed() < Duration::from_secs(20), "{hostility:?}");
    }
    runtime.block_on(async {
        let _ = reference.shutdown().await;
        let _ = candidate.shutdown().await;
    });
}
