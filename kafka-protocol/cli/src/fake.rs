//! `kafka-protocol fake`: a fake Kafka cluster (kafka-wire-fake) until
//! SIGTERM or SIGINT. Prints exactly one line on standard output,
//! `bootstrap HOST:PORT,...`, once every broker is ready.

use std::io::Write;
use std::time::Duration;

use kafka_wire_fake::{FakeCluster, SaslMechanism, TopicSpec};

use crate::args::FakeArgs;
use crate::error::CliError;

/// Runs the cluster until a signal, then stops it and returns `Ok`.
pub fn run(args: &FakeArgs) -> Result<(), CliError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Fake(format!("cannot start the runtime: {e}")))?;
    runtime.block_on(serve(args))
}

async fn serve(args: &FakeArgs) -> Result<(), CliError> {
    let mut builder = FakeCluster::builder()
        .brokers(usize::from(args.brokers))
        .host(args.host.clone())
        .ports(args.ports.iter().copied())
        .cluster_id(args.cluster_id.clone())
        .auto_create(!args.no_auto_create)
        .default_partitions(args.default_partitions)
        .max_bytes(args.max_bytes)
        .max_connections(usize::try_from(args.max_connections).unwrap_or(usize::MAX))
        .idle_timeout(Duration::from_secs(args.idle_timeout));
    for (name, partitions) in &args.topics {
        builder = builder.topic(TopicSpec::new(name.clone(), *partitions));
    }
    for (mechanism, user, password) in &args.sasl {
        let mechanism = SaslMechanism::from_name(mechanism)
            .ok_or_else(|| CliError::Fake(format!("unknown SASL mechanism {mechanism}")))?;
        builder = builder.sasl_user(mechanism, user.clone(), password.clone());
    }
    if let Some(path) = &args.capture {
        builder = builder.capture(path.clone());
    }
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| CliError::Fake(format!("cannot handle SIGTERM: {e}")))?;
    let cluster = builder
        .start()
        .await
        .map_err(|e| CliError::Fake(e.to_string()))?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "bootstrap {}", cluster.bootstrap()).map_err(CliError::Write)?;
        out.flush().map_err(CliError::Write)?;
    }
    eprintln!(
        "kafka-protocol fake: {} broker(s), node ids {:?}",
        cluster.node_ids().len(),
        cluster.node_ids()
    );
    tokio::select! {
        _ = terminate.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    eprintln!("kafka-protocol fake: shutting down");
    cluster
        .shutdown()
        .await
        .map_err(|e| CliError::Fake(e.to_string()))
}
