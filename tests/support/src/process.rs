//! Running the program under test as a child process.

use std::io::Write;
use std::process::{Command, Output, Stdio};

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
}
