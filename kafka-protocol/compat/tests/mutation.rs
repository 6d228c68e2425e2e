//! The checker can fail: a fake cluster compared with another, one of them
//! changed by a control that alters a single answer (an error code, an
//! answer replaced through `respond`, an answer dropped), is reported as a
//! difference at exactly the case that sent that request, and nowhere else.
//! And a candidate that restarts in the middle of a run does not end it.

use std::time::{Duration, Instant};

use kafka_wire::messages::DescribeClusterResponse;
use kafka_wire::{ApiKey, ErrorCode, ResponseBody};
use kafka_wire_compat::case::Area;
use kafka_wire_compat::driver::{run_blocking, unix_ms, DriverConfig};
use kafka_wire_compat::engine::{Config, Engine};
use kafka_wire_compat::report::{Report, Verdict};
use kafka_wire_fake::control::Intercept;
use kafka_wire_fake::FakeCluster;

/// The api the controls change: one the run's setup and teardown never
/// send, so that its first request is its first sweep case's, and one
/// whose answer to a default body has fields to change.
const TARGET: ApiKey = ApiKey::DescribeCluster;

fn compare(reference: &str, candidate: &str) -> Report {
    let mut config = Config::new(reference, candidate);
    config.apis = vec![TARGET, ApiKey::Metadata, ApiKey::DescribeConfigs];
    config.scenarios = Vec::new();
    config.timeout = Duration::from_secs(2);
    let engine = Engine::new(config, Instant::now(), unix_ms());
    run_blocking(engine, &DriverConfig::default(), |_| {})
        .unwrap_or_else(|e| panic!("a runtime: {e}"))
        .unwrap_or_else(|e| panic!("{e}"))
}

fn start_two(runtime: &tokio::runtime::Runtime) -> (FakeCluster, FakeCluster) {
    runtime.block_on(async {
        let reference = FakeCluster::builder().brokers(1).start().await;
        let candidate = FakeCluster::builder().brokers(1).start().await;
        (
            reference.unwrap_or_else(|e| panic!("{e}")),
            candidate.unwrap_or_else(|e| panic!("{e}")),
        )
    })
}

/// The names of the cases that did not compare the same.
fn differing(report: &Report) -> Vec<&str> {
    report
        .cases
        .iter()
        .filter(|c| c.verdict != Verdict::Same)
        .map(|c| c.case.as_str())
        .collect()
}

#[test]
fn each_control_that_changes_an_answer_is_reported_at_exactly_its_case() {
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let (reference, candidate) = start_two(&runtime);

    // Unchanged, the two fakes compare the same: what follows is the
    // controls' doing alone.
    let clean = compare(&reference.bootstrap(), &candidate.bootstrap());
    assert_eq!(differing(&clean), Vec::<&str>::new());
    let first = clean
        .cases
        .iter()
        .find(|c| c.api == Some(TARGET) && c.area == Area::Sweep)
        .map(|c| c.case.clone())
        .unwrap_or_else(|| panic!("no {TARGET:?} case in {:?}", clean.cases));
    assert!(
        clean
            .cases
            .iter()
            .filter(|c| c.api == Some(TARGET) && c.area == Area::Sweep)
            .count()
            > 1,
        "one {TARGET:?} case only: the test could not tell which one differs"
    );

    let controls = [
        (
            "an error code",
            Intercept::api(TARGET)
                .once()
                .error(ErrorCode::PolicyViolation),
        ),
        (
            "an answer replaced",
            Intercept::api(TARGET)
                .once()
                .respond(|_, _| ResponseBody::DescribeCluster(DescribeClusterResponse::default())),
        ),
        (
            "an answer dropped",
            Intercept::api(TARGET).once().drop_after(),
        ),
    ];
    for (what, control) in controls {
        let id = candidate
            .intercept(control)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let report = compare(&reference.bootstrap(), &candidate.bootstrap());
        assert_eq!(
            candidate.intercept_hits(id),
            Some(1),
            "{what}: the control fired once"
        );
        assert_eq!(differing(&report), [first.as_str()], "{what}");
        let case = report
            .cases
            .iter()
            .find(|c| c.case == first)
            .unwrap_or_else(|| panic!("{what}: {first} not run"));
        assert_eq!(case.verdict, Verdict::Differ, "{what}: {case:?}");
        assert!(!case.differences.is_empty(), "{what}: {case:?}");
        candidate.remove_intercept(id);
    }
    runtime.block_on(async {
        let _ = reference.shutdown().await;
        let _ = candidate.shutdown().await;
    });
}

#[test]
fn a_candidate_that_restarts_mid_run_does_not_end_the_run() {
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let (reference, candidate) = start_two(&runtime);
    let clean = compare(&reference.bootstrap(), &candidate.bootstrap());
    assert_eq!(differing(&clean), Vec::<&str>::new());
    // The first sweep case of DescribeConfigs, which the run sends between
    // Metadata's cases and DescribeCluster's.
    let cut = clean
        .cases
        .iter()
        .find(|c| c.api == Some(ApiKey::DescribeConfigs) && c.area == Area::Sweep)
        .map(|c| c.case.clone())
        .unwrap_or_else(|| panic!("no DescribeConfigs case in {:?}", clean.cases));

    // The candidate's one broker stops and starts again, its data kept,
    // while that case waits for its answer (held back a second by the
    // control, so that the restart falls inside the case and no other).
    let held = Intercept::api(ApiKey::DescribeConfigs)
        .once()
        .delay(Duration::from_secs(1));
    let id = candidate.intercept(held).unwrap_or_else(|e| panic!("{e}"));
    let node = candidate.node_ids()[0];
    let report = std::thread::scope(|scope| {
        let run = scope.spawn(|| compare(&reference.bootstrap(), &candidate.bootstrap()));
        let deadline = Instant::now() + Duration::from_secs(30);
        while candidate.intercept_hits(id) != Some(1) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        runtime
            .block_on(candidate.restart_broker(node))
            .unwrap_or_else(|e| panic!("restart: {e}"));
        run.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
    });
    // Every case ran to its verdict, the same cases as without the
    // restart; the one it cut differs, and every later one compares the
    // same against the restarted broker.
    let names = |r: &Report| r.cases.iter().map(|c| c.case.clone()).collect::<Vec<_>>();
    assert_eq!(names(&report), names(&clean));
    assert_eq!(
        differing(&report),
        [cut.as_str()],
        "{:?}",
        report
            .cases
            .iter()
            .filter(|c| c.verdict != Verdict::Same)
            .collect::<Vec<_>>()
    );
    runtime.block_on(async {
        let _ = reference.shutdown().await;
        let _ = candidate.shutdown().await;
    });
}
