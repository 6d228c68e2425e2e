//! `kafka-protocol`: decode and encode Kafka wire-protocol messages, frames
//! and record batches from the command line.
//!
//! Exit status: 0 on success (and when standard output is closed early, as
//! by `head`), 1 on bad input or a failed exchange with a broker (no
//! connection, a response that does not decode, a timeout) with exactly one
//! `error: ...` line on standard error, 2 on a usage error (printed by clap).
#![forbid(unsafe_code)]

mod apis;
mod args;
mod client;
mod compat;
mod decode;
mod encode;
mod error;
mod fake;
mod input;
mod output;
mod pcap;
mod proxy;
mod records;
mod request;
mod versions;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use args::{Cli, Command};
use error::CliError;
use output::Output;

fn main() -> ExitCode {
    install_panic_hook();
    let cli = Cli::parse();
    let plan = match &cli.command {
        Command::Decode(args) => Some(args.message.plan("decode")),
        Command::Encode(args) => Some(args.message.plan("encode")),
        Command::Fake(args) => {
            if let Err(usage) = args.check() {
                usage.exit();
            }
            None
        }
        Command::Apis(_)
        | Command::Compat(_)
        | Command::Records(_)
        | Command::Pcap(_)
        | Command::Proxy(_)
        | Command::Request(_)
        | Command::Versions(_) => None,
    }
    .transpose()
    .unwrap_or_else(|usage| usage.exit());
    let compat_plan = match &cli.command {
        Command::Compat(args) => Some(args.check().unwrap_or_else(|usage| usage.exit())),
        _ => None,
    };
    match run(&cli.command, plan.as_ref(), compat_plan.as_ref()) {
        Ok(code) => code,
        Err(CliError::BrokenPipe) => ExitCode::SUCCESS,
        Err(error) => {
            report(&error.one_line());
            ExitCode::from(error.exit_code())
        }
    }
}

/// Runs one subcommand: its exit status, or the error to report. Standard
/// output is flushed before this returns, so whatever was printed comes
/// before any error line.
fn run(
    command: &Command,
    plan: Option<&args::Plan>,
    compat_plan: Option<&args::CompatPlan>,
) -> Result<ExitCode, CliError> {
    let mut out = Output::new();
    if let (Command::Compat(args), Some(compat_plan)) = (command, compat_plan) {
        let result = compat::run(args, compat_plan, &mut out);
        let flushed = out.flush();
        return result.and_then(|code| flushed.map(|()| code));
    }
    let result = match (command, plan) {
        (Command::Decode(args), Some(plan)) => decode::run(args, plan, &mut out),
        (Command::Encode(args), Some(plan)) => encode::run(args, plan, &mut out),
        (Command::Apis(args), _) => apis::run(args.json, args.compact, &mut out),
        (Command::Records(args), _) => records::run(args, &mut out),
        (Command::Pcap(args), _) => pcap::run(args, &mut out),
        (Command::Proxy(args), _) => proxy::run(args),
        (Command::Fake(args), _) => fake::run(args),
        (Command::Request(args), _) => request::run(args, &mut out),
        (Command::Versions(args), _) => versions::run(args, &mut out),
        // `main` makes a plan for every decode and encode, and for compat.
        (Command::Decode(_) | Command::Encode(_), None) | (Command::Compat(_), _) => Ok(()),
    };
    // Keep what was printed before a failure (earlier frames of a stream).
    let flushed = out.flush();
    result.and(flushed).map(|()| ExitCode::SUCCESS)
}

/// Prints `error: <message>` on standard error, ignoring a closed stderr.
fn report(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "error: {message}");
}

/// Makes a panic, which should never happen, print one line and exit with
/// status 1 instead of printing a backtrace and exiting with 101.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("panic");
        let location = info
            .location()
            .map(|l| format!(" ({}:{})", l.file(), l.line()))
            .unwrap_or_default();
        let line = format!("internal error: {message}{location}");
        report(&line.replace('\n', "\\n"));
        std::process::exit(1);
    }));
}
