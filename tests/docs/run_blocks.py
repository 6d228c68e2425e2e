#!/usr/bin/env python3
"""Runs the code blocks of the guides, so that a guide cannot drift from the
code: README.md, docs/*.md and the packages' READMEs.

What each block's language gets:

- `sh`, `bash`: run with bash (`set -euo pipefail`), in a scratch directory
  that holds links to the repository's top-level entries (so that
  `fixtures/...` reads and files written land in the scratch directory),
  with the built `kafka-protocol` first on PATH. Whatever the block starts
  in the background is stopped when it ends.
- `console`: each `$ ` line (with `\\` continuations) is run the same way,
  and what it prints (standard output and error together) must be the
  lines shown after it.
- `python`: run with python3.
- `toml`, `json`: parsed.
- `rust`: compiled and run as doc tests of kafka-wire-docs (tests/docs),
  not here; this script checks that every guide with Rust blocks is one of
  its modules (or a crate's own documentation).
- `text`: output or grammar, not code: nothing to run.

Any other language, or a block with none, is an error: say what it is.

HTML comments right before a block (on the lines before its fence) mark it:

    <!-- not run: why -->        it is not run; the reason is printed
    <!-- needs: kcat root -->    it runs only where these are: programs on
                                 PATH, `root`, `python3:MODULE`, or a path
                                 (`../shared`) from the repository; else it
                                 is skipped with a message, or fails when the
                                 matching KAFKA_WIRE_REQUIRE_* is set

Prints, per guide, how many blocks ran, were checked, skipped and not run.
Exits 1 when a block fails.

Usage: run_blocks.py [--bin-dir DIR] [--only GUIDE]... [--verbose] [--list]
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120

# The variable that makes a missing need a failure, per need.
REQUIRE = {
    "tcpdump": "KAFKA_WIRE_REQUIRE_CAPTURE",
    "tshark": "KAFKA_WIRE_REQUIRE_CAPTURE",
    "root": "KAFKA_WIRE_REQUIRE_CAPTURE",
    "kcat": "KAFKA_WIRE_REQUIRE_INTEROP",
    "node": "KAFKA_WIRE_REQUIRE_INTEROP",
    "java": "KAFKA_WIRE_REQUIRE_JAVA",
    "mvn": "KAFKA_WIRE_REQUIRE_JAVA",
    "go": "KAFKA_WIRE_REQUIRE_GO",
    "../shared": "KAFKA_WIRE_REQUIRE_SHARED",
}

RUN = {"sh", "bash", "console", "python"}
PARSE = {"toml", "json"}
NOT_CODE = {"text"}
RUST = "rust"


def guides():
    """The guides, as paths relative to the repository."""
    found = [Path("README.md")]
    found += sorted(p.relative_to(ROOT) for p in (ROOT / "docs").glob("*.md"))
    # The packages' READMEs, at any depth (the npm package's is
    # kafka-protocol/npm/kafka-wire/README.md), as git tracks them.
    listed = subprocess.run(
        ["git", "ls-files", "codegen", "kafka-protocol"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()
    found += sorted(Path(p) for p in listed if Path(p).name == "README.md")
    return found


class Block:
    def __init__(self, guide, line, lang, attrs, text, marks):
        self.guide = guide
        self.line = line
        self.lang = lang
        self.attrs = attrs
        self.text = text
        self.marks = marks

    def where(self):
        return f"{self.guide}:{self.line}"


MARK = re.compile(r"<!--\s*(not run|needs)\s*:\s*(.*?)\s*-->")


def blocks(guide):
    """The fenced blocks of a guide, with the marks before each."""
    lines = (ROOT / guide).read_text().split("\n")
    found = []
    i = 0
    while i < len(lines):
        stripped = lines[i].lstrip()
        if not stripped.startswith("```"):
            i += 1
            continue
        indent = len(lines[i]) - len(stripped)
        info = stripped[3:].strip()
        lang, *attrs = [part.strip() for part in info.split(",")] if info else [""]
        marks = {}
        j = i - 1
        while j >= 0 and MARK.search(lines[j]):
            for kind, value in MARK.findall(lines[j]):
                marks[kind] = value
            j -= 1
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        found.append(Block(guide, i - len(body), lang, attrs, "\n".join(body) + "\n", marks))
        i += 1
    return found


def missing(needs, env):
    """The needs of a block that this machine lacks."""
    lacking = []
    for need in needs.split():
        if need == "root":
            if os.geteuid() != 0:
                lacking.append(need)
        elif need.startswith("python3:"):
            module = need.split(":", 1)[1]
            code = f"import {module}"
            if subprocess.run(["python3", "-c", code], capture_output=True).returncode != 0:
                lacking.append(need)
        elif "/" in need:
            if not (ROOT / need).exists():
                lacking.append(need)
        elif shutil.which(need, path=env["PATH"]) is None:
            lacking.append(need)
    return lacking


def scratch():
    """A scratch directory that looks like the repository: links to its
    top-level entries, and `../shared` beside it when the repository has
    one. Writable by all, as tcpdump writes after dropping privileges.
    Returns (the directory to remove, the one to run in)."""
    outer = Path(tempfile.mkdtemp(prefix="guide-block-"))
    inner = outer / "repository"
    inner.mkdir()
    for directory in (outer, inner):
        directory.chmod(0o777)
    for entry in ROOT.iterdir():
        if entry.name not in (".git", "target"):
            (inner / entry.name).symlink_to(entry)
    shared = ROOT.parent / "shared"
    if shared.is_dir():
        (outer / "shared").symlink_to(shared)
    return outer, inner


def run_shell(script, cwd, env):
    """Runs a bash script in its own process group, which is stopped when
    the script ends (what it started in the background with it); (exit
    status, what it printed)."""
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(
            ["bash", "-c", "set -euo pipefail\n" + script],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            status = process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            status = f"timed out after {TIMEOUT} s"
        finally:
            for stop in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(process.pid, stop)
                except ProcessLookupError:
                    break
                time.sleep(0.2)
            process.wait()
        out.seek(0)
        return status, out.read().decode(errors="replace")


def console_steps(text):
    """A console block's commands, each with the output shown after it."""
    steps = []
    lines = text.rstrip("\n").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command += "\n" + lines[i]
            steps.append((command, []))
        elif steps:
            steps[-1][1].append(line)
        else:
            raise ValueError("a console block starts with a `$ ` command")
        i += 1
    return steps


def run_block(block, env):
    """None when the block ran as shown, else what went wrong."""
    outer, directory = scratch()
    try:
        if block.lang in ("sh", "bash"):
            status, out = run_shell(block.text, directory, env)
            if status != 0:
                return f"exit {status}:\n{out}"
            return None
        if block.lang == "python":
            script = directory / "block.py"
            script.write_text(block.text)
            status, out = run_shell(f"python3 {script}", directory, env)
            return None if status == 0 else f"exit {status}:\n{out}"
        for command, shown in console_steps(block.text):
            _, out = run_shell(command, directory, env)
            printed = out.rstrip("\n").split("\n") if out.strip() else []
            if [line.rstrip() for line in printed] != [line.rstrip() for line in shown]:
                return (
                    f"`{command}` printed:\n" + "\n".join(printed)
                    + "\nwhere the guide shows:\n" + "\n".join(shown)
                )
        return None
    finally:
        shutil.rmtree(outer, ignore_errors=True)


def parse_block(block):
    """None when the block parses, else why not."""
    try:
        if block.lang == "toml":
            tomllib.loads(block.text)
        else:
            json.loads(block.text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as error:
        return str(error)
    return None


def doc_tested():
    """The guides whose Rust blocks run as doc tests: the modules of
    kafka-wire-docs, and the crates documented by their README."""
    sources = [ROOT / "tests/docs/lib.rs"]
    sources += (ROOT / "kafka-protocol").glob("*/src/lib.rs")
    sources.append(ROOT / "codegen/src/lib.rs")
    tested = set()
    for source in sources:
        if not source.exists():
            continue
        for included in re.findall(r'include_str!\("([^"]+)"\)', source.read_text()):
            tested.add((source.parent / included).resolve())
    return tested


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin-dir", help="where the built kafka-protocol is")
    parser.add_argument("--only", action="append", help="only this guide (repeatable)")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--list", action="store_true",
                        help="list the blocks that would run, and run none")
    args = parser.parse_args()
    # Stopped, the block running now is stopped too (the `finally` of
    # run_shell).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    env = dict(os.environ)
    if args.bin_dir:
        env["PATH"] = f"{Path(args.bin_dir).resolve()}{os.pathsep}{env.get('PATH', '')}"
    if shutil.which("kafka-protocol", path=env["PATH"]) is None:
        print("run_blocks: no kafka-protocol on PATH: build it (cargo build -p kafka-wire-cli) "
              "and give --bin-dir", file=sys.stderr)
        return 1

    tested = doc_tested()
    failures = []
    totals = {"ran": 0, "checked": 0, "rust": 0, "skipped": 0, "not run": 0}
    for guide in guides():
        if args.only and str(guide) not in args.only:
            continue
        counts = dict.fromkeys(totals, 0)
        reasons = []
        for block in blocks(guide):
            if block.lang in NOT_CODE:
                continue
            if block.lang == RUST:
                counts["rust"] += 1
                if (ROOT / guide).resolve() not in tested:
                    failures.append((block, "a Rust block in a guide that no doc test includes: "
                                     "add it to tests/docs/lib.rs"))
                continue
            if "not run" in block.marks:
                counts["not run"] += 1
                reasons.append(f"{block.where()}: not run: {block.marks['not run']}")
                continue
            if block.lang in PARSE:
                problem = parse_block(block)
                counts["checked"] += 1
                if problem:
                    failures.append((block, f"does not parse as {block.lang}: {problem}"))
                continue
            if block.lang not in RUN:
                failures.append((block, f"a block of language `{block.lang or '(none)'}`: give it "
                                 "one (text for output or grammar), or mark it "
                                 "<!-- not run: why -->"))
                continue
            lacking = missing(block.marks.get("needs", ""), env)
            if lacking:
                required = sorted({REQUIRE[n] for n in lacking if n in REQUIRE and os.environ.get(REQUIRE[n])})
                if required:
                    failures.append((block, f"{', '.join(required)} is set, but this machine lacks "
                                     f"{' '.join(lacking)}"))
                else:
                    counts["skipped"] += 1
                    reasons.append(f"{block.where()}: skipped: no {' '.join(lacking)} here")
                continue
            if args.list:
                first = block.text.strip().split("\n")[0]
                print(f"  would run {block.where()} ({block.lang}): {first}")
                continue
            started = time.monotonic()
            problem = run_block(block, env)
            counts["ran"] += 1
            if args.verbose:
                reasons.append(f"{block.where()}: ran in {time.monotonic() - started:.1f} s")
            if problem:
                failures.append((block, problem))
        for key in totals:
            totals[key] += counts[key]
        print(f"{guide}: {counts['ran']} ran, {counts['checked']} parsed, "
              f"{counts['rust']} Rust (doc tests), {counts['skipped']} skipped, "
              f"{counts['not run']} not run")
        for reason in reasons:
            if args.verbose or "skipped" in reason:
                print(f"  {reason}")
    print(f"all guides: {totals['ran']} ran, {totals['checked']} parsed, {totals['rust']} Rust "
          f"(doc tests), {totals['skipped']} skipped, {totals['not run']} not run")
    for block, problem in failures:
        print(f"FAILED {block.where()} ({block.lang or 'no language'}): {problem}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
