//! `kafka-protocol fake`: a fake Kafka cluster (kafka-wire-fake) until
//! SIGTERM or SIGINT (or, with `--stop-on-eof`, the end of standard input).
//! Prints one line on standard output, `bootstrap HOST:PORT,...`, once
//! every broker is ready; with `--control`, one answer line per command
//! read from standard input follows. Faults (`--fault`) are applied from
//! the start; on stopping, one line on standard error counts the faults
//! injected.

use std::io::Write;
use std::time::Duration;

use kafka_wire_fake::{FakeCluster, SaslMechanism, StreamsGroupConfig, TopicSpec};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader, Stdin};
use tokio::signal::unix::{signal, SignalKind};

/// The longest control line read (1 MiB).
const MAX_COMMAND_LINE: u64 = 1 << 20;

use crate::args::FakeArgs;
use crate::error::CliError;

/// Runs the cluster until a signal, then stops it and returns `Ok`.
pub fn run(args: &FakeArgs) -> Result<(), CliError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Fake(format!("cannot start the runtime: {e}")))?;
    let result = runtime.block_on(serve(args));
    // The cluster has stopped. tokio reads standard input on a thread of
    // its blocking pool, which dropping the runtime would wait for: while
    // the writer keeps the pipe open, that read never ends, and a signal
    // would leave the process waiting for input. Nothing is left to finish.
    runtime.shutdown_background();
    result
}

async fn serve(args: &FakeArgs) -> Result<(), CliError> {
    let mut builder = FakeCluster::builder()
        .brokers(usize::from(args.brokers))
        .node_ids(args.node_ids.iter().copied())
        .host(args.host.clone())
        .ports(args.ports.iter().copied())
        .cluster_id(args.cluster_id.clone())
        .auto_create(!args.no_auto_create)
        .first_sequence_from_zero(args.first_sequence_from_zero)
        .default_partitions(args.default_partitions)
        .max_bytes(args.max_bytes)
        .max_connections(usize::try_from(args.max_connections).unwrap_or(usize::MAX))
        .idle_timeout(Duration::from_secs(args.idle_timeout));
    for (node_id, host, port) in &args.advertise {
        builder = builder.advertise(*node_id, host.clone(), *port);
    }
    for (node_id, rack) in &args.racks {
        builder = builder.rack(*node_id, rack.clone());
    }
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
    let mut streams = StreamsGroupConfig::default();
    for (key, value) in &args.streams_config {
        streams
            .set(key, value)
            .map_err(|e| CliError::Fake(format!("--streams-config {e}")))?;
    }
    builder = builder.streams_groups(streams);
    // Both handlers are in place before the bootstrap line: a signal sent
    // as soon as it is read stops the cluster as any other does (SIGINT's
    // default action would kill the process without the fault counts).
    let mut terminate = signal(SignalKind::terminate())
        .map_err(|e| CliError::Fake(format!("cannot handle SIGTERM: {e}")))?;
    let mut interrupt = signal(SignalKind::interrupt())
        .map_err(|e| CliError::Fake(format!("cannot handle SIGINT: {e}")))?;
    let cluster = builder
        .start()
        .await
        .map_err(|e| CliError::Fake(e.to_string()))?;
    // The seed and the faults are in place before the bootstrap line: a
    // client that connects as soon as it reads it meets them from its
    // first request (they were applied after it, and a fast client's first
    // request could pass before its `times=1` fault).
    cluster.seed(args.seed);
    for fault in &args.faults {
        cluster
            .apply_fault(fault)
            .map_err(|e| CliError::Fake(e.to_string()))?;
    }
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
    if cluster.advertised() != cluster.bootstrap() {
        eprintln!(
            "kafka-protocol fake: advertised as {}",
            cluster.advertised()
        );
    }
    let mut commands = args.control.then(|| BufReader::new(tokio::io::stdin()));
    loop {
        tokio::select! {
            _ = terminate.recv() => break,
            _ = interrupt.recv() => break,
            line = next_command(&mut commands) => match line {
                Some(line) if line.trim().is_empty() => {}
                Some(line) => {
                    let answer = cluster.control_line(&line).await;
                    let mut out = std::io::stdout().lock();
                    writeln!(out, "{answer}").map_err(CliError::Write)?;
                    out.flush().map_err(CliError::Write)?;
                }
                // End of input stops the cluster with `--stop-on-eof` (the
                // writer has gone: a wrapper that died, say); otherwise it
                // runs on until a signal.
                None if args.stop_on_eof => {
                    eprintln!("kafka-protocol fake: standard input ended");
                    break;
                }
                None => commands = None,
            },
        }
    }
    eprintln!("kafka-protocol fake: shutting down");
    eprintln!("{}", cluster.fault_counts());
    cluster
        .shutdown()
        .await
        .map_err(|e| CliError::Fake(e.to_string()))
}

/// The next command line, when reading commands; never, otherwise. A line
/// longer than the control limit ends the input.
async fn next_command(commands: &mut Option<BufReader<Stdin>>) -> Option<String> {
    let Some(input) = commands else {
        return std::future::pending().await;
    };
    let mut line = Vec::new();
    match input
        .take(MAX_COMMAND_LINE + 1)
        .read_until(b'\n', &mut line)
        .await
    {
        Ok(0) | Err(_) => None,
        Ok(_) if line.last() != Some(&b'\n') && line.len() as u64 > MAX_COMMAND_LINE => {
            eprintln!("kafka-protocol fake: a control line is longer than {MAX_COMMAND_LINE} bytes: no more commands");
            None
        }
        Ok(_) => Some(String::from_utf8_lossy(&line).trim_end().to_owned()),
    }
}
