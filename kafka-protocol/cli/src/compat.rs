//! `compat`: a thin adapter over kafka-wire-compat. It builds the engine's
//! configuration from the flags, runs it with the tokio driver, prints the
//! text report and writes the JSON and Markdown ones. On a terminal,
//! progress goes to standard error.

use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use kafka_wire_compat::driver::{self, unix_ms, DriverConfig};
use kafka_wire_compat::engine::{Config, Engine, Progress, Stage};
use kafka_wire_compat::report;

use crate::args::{CompatArgs, CompatPlan};
use crate::error::CliError;
use crate::output::{write_error, Output};

/// Runs `compat`: exit status 0 when no difference remains outside the
/// allow list, 1 when some do; [`CliError::Unreachable`] (status 3) when
/// a side cannot be reached.
pub fn run(args: &CompatArgs, plan: &CompatPlan, out: &mut Output) -> Result<ExitCode, CliError> {
    // Open the report files first: a path that cannot be written is a
    // usage error, found before the run rather than after it.
    let json = create(args.json.as_deref(), "--json")?;
    let markdown = create(args.markdown.as_deref(), "--markdown")?;
    let mut config = Config::new(args.reference.clone(), args.candidate.clone());
    config.timeout = Duration::from_millis(args.timeout_ms);
    config.apis = plan.apis.clone();
    config.allow = plan.allow.clone();
    config.scenarios = plan.scenarios.clone();
    config.replay = plan.replay.clone();
    let driver_config = DriverConfig {
        sasl: args.sasl.clone(),
        client_id: "kafka-protocol-compat".into(),
        ..DriverConfig::default()
    };
    let engine = Engine::new(config, Instant::now(), unix_ms());
    let mut shown = Shown::new();
    let result = driver::run_blocking(engine, &driver_config, |progress| shown.show(progress))
        .map_err(|e| CliError::Fake(format!("cannot start the runtime: {e}")))?;
    shown.end();
    let report = result.map_err(CliError::Unreachable)?;
    report::text::write(&report, out.writer()).map_err(write_error)?;
    for (file, what, write) in [
        (
            json,
            "--json",
            report::json::write as fn(&report::Report, &mut dyn Write) -> std::io::Result<()>,
        ),
        (markdown, "--markdown", report::markdown::write),
    ] {
        if let Some((mut file, path)) = file {
            write(&report, &mut file).map_err(|source| CliError::WriteReport {
                what: format!("{what} {path}"),
                source,
            })?;
        }
    }
    Ok(if report.remaining() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn create(path: Option<&Path>, flag: &str) -> Result<Option<(BufWriter<File>, String)>, CliError> {
    let Some(path) = path else {
        return Ok(None);
    };
    let file = File::create(path).map_err(|source| CliError::ReportFile {
        what: format!("{flag} {}", path.display()),
        source,
    })?;
    Ok(Some((BufWriter::new(file), path.display().to_string())))
}

/// Progress on standard error, at most once a second, when it is a
/// terminal.
struct Shown {
    terminal: bool,
    last: Option<Instant>,
    printed: bool,
}

impl Shown {
    fn new() -> Shown {
        Shown {
            terminal: std::io::stderr().is_terminal(),
            last: None,
            printed: false,
        }
    }

    fn show(&mut self, progress: Progress) {
        if !self.terminal
            || self
                .last
                .is_some_and(|at| at.elapsed() < Duration::from_secs(1))
        {
            return;
        }
        self.last = Some(Instant::now());
        let stage = match progress.stage {
            Stage::Bootstrap => "bootstrap",
            Stage::Setup => "creating the run's topics",
            Stage::Cases => "cases",
            Stage::Teardown => "deleting the run's topics and groups",
            Stage::Done => "done",
        };
        let _ = write!(
            std::io::stderr(),
            "\rcompat: {stage}, {}/{} cases\x1b[K",
            progress.done,
            progress.total
        );
        self.printed = true;
    }

    fn end(&self) {
        if self.printed {
            let _ = writeln!(std::io::stderr());
        }
    }
}
