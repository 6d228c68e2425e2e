//! Running the program under test as a child process: once with its
//! input ([`run_with_input`]), or as a server that says where it listens
//! ([`Listening`]).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};

/// Runs `command` with its standard streams piped, writes `stdin` to it,
/// and waits for it to exit: its status and everything it wrote.
///
/// A program that exits before reading all its input (bad arguments, an
/// early error) closes the pipe; that is not a failure here. Panics when
/// the program cannot be started or waited for.
pub fn run_with_input(command: &mut Command, stdin: &[u8]) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    if let Some(mut input) = child.stdin.take() {
        let _ = input.write_all(stdin);
    }
    child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("cannot wait for {command:?}: {e}"))
}

/// A server started for a test, whose first line on standard output is
/// `listening on ADDR` (or, from `kafka-protocol fake`, `bootstrap ADDR`:
/// one broker's address, or several joined by commas); its standard error
/// goes to a file, and what it prints on standard output after that line
/// stays in the pipe until [`stop_with_output`](Listening::stop_with_output)
/// reads it. Killed when dropped, also when a test fails.
#[derive(Debug)]
pub struct Listening {
    child: Child,
    address: String,
    stderr: PathBuf,
    stdout: Option<BufReader<ChildStdout>>,
}

impl Listening {
    /// Starts `command` and reads its first line. Panics, with what it
    /// wrote to standard error, when that line does not say where it
    /// listens.
    pub fn start(command: &mut Command, stderr: &Path) -> Listening {
        let err =
            std::fs::File::create(stderr).unwrap_or_else(|e| panic!("{}: {e}", stderr.display()));
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("{command:?}: {e}"));
        let mut line = String::new();
        let mut stdout = child.stdout.take().map(BufReader::new);
        if let Some(stdout) = &mut stdout {
            let _ = stdout.read_line(&mut line);
        }
        let line = line.trim();
        let said = line.strip_prefix("listening on ");
        let Some(address) = said.or_else(|| line.strip_prefix("bootstrap ")) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{command:?} did not start: {line:?}\n{}",
                std::fs::read_to_string(stderr).unwrap_or_default()
            );
        };
        Listening {
            address: address.to_owned(),
            child,
            stderr: stderr.to_owned(),
            stdout,
        }
    }

    /// The address it listens on.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// What it wrote to standard error so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Whether it is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Sends SIGTERM and waits: the exit code, and everything it wrote to
    /// standard error.
    pub fn stop(self) -> (Option<i32>, String) {
        let (code, _, stderr) = self.stop_with_output();
        (code, stderr)
    }

    /// [`stop`](Self::stop), with what it printed on standard output after
    /// its first line: the exit code, that output, and its standard error.
    pub fn stop_with_output(mut self) -> (Option<i32>, String, String) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap_or_else(|e| panic!("kill: {e}"));
        assert!(status.success(), "kill -TERM {}", self.child.id());
        let code = self
            .child
            .wait()
            .unwrap_or_else(|e| panic!("waiting: {e}"))
            .code();
        let mut stdout = String::new();
        if let Some(mut rest) = self.stdout.take() {
            let _ = rest.read_to_string(&mut stdout);
        }
        (code, stdout, self.stderr())
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feeds_the_input_and_keeps_the_output() {
        let output = run_with_input(Command::new("cat").arg("-"), b"some input");
        assert!(output.status.success());
        assert_eq!(output.stdout, b"some input");
        // A program that reads nothing.
        let output = run_with_input(&mut Command::new("true"), &[0; 1 << 20]);
        assert!(output.status.success());
    }

    #[test]
    fn a_server_says_where_it_listens_and_stops_on_sigterm() {
        let stderr = std::env::temp_dir().join(format!("listening-{}.err", std::process::id()));
        let server = Listening::start(
            Command::new("sh").args([
                "-c",
                "echo hi >&2; echo 'listening on 127.0.0.1:1'; echo more; exec sleep 30",
            ]),
            &stderr,
        );
        assert_eq!(server.address(), "127.0.0.1:1");
        let (code, out, err) = server.stop_with_output();
        assert_eq!(code, None, "killed by SIGTERM");
        assert_eq!(out, "more\n");
        assert_eq!(err, "hi\n");
        let _ = std::fs::remove_file(stderr);
    }
}
