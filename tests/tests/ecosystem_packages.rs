//! The fake cluster's packages for other ecosystems, each built from the
//! repository, installed into a clean place from its built artifact alone,
//! and its example tests run there:
//!
//! - Python (`kafka-protocol/python`): `pip wheel` (maturin), a new venv
//!   that installs the wheel, pytest with confluent-kafka;
//! - JavaScript (`kafka-protocol/npm`): `pack.sh`'s two tarballs installed
//!   into an empty directory, node:test with kafkajs, Jest, Vitest and the
//!   types under `tsc --strict`;
//! - Java (`kafka-protocol/junit`): `mvn install` into the local Maven
//!   repository, then the example project's JUnit tests with kafka-clients
//!   4.4.0, from a copy elsewhere.
//!
//! Then, for each, the paths on which a test process ends: a failed test,
//! an interrupt (SIGINT to the process that started the cluster) and a
//! crash (SIGKILL to it); the cluster's process must be gone after each,
//! checked by its process id. The release binary is built once, by the
//! wheel's build, and the other two packages carry the same binary.
//!
//! Each skips with a message where its tools (python3, node and npm, java
//! and mvn) or its installed dependencies are missing; with
//! `KAFKA_WIRE_REQUIRE_PACKAGES` set, as `.ci/run` sets it after its install
//! step (a wheelhouse in target/packages/wheelhouse, the npm cache filled
//! through target/packages/npm-warm, ~/.m2 through `dependency:go-offline`),
//! that is a failure. The tests use no network: pip installs from the
//! wheelhouse, npm and Maven run offline. Each step prints its time;
//! `benches/packages` measures the speeds.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use kafka_wire_tests::workspace_root;

/// How long a cluster may outlive the end of the test process that started
/// it: it stops within milliseconds of its pipe closing.
const GONE_WITHIN: Duration = Duration::from_secs(10);

/// How long a test runner may take on one lifetime path.
const RUNNER_BOUND: Duration = Duration::from_secs(180);

/// Whether `KAFKA_WIRE_REQUIRE_PACKAGES` is set (by `.ci/run`, after its
/// install step), which makes a missing tool or dependency a failure.
fn required() -> bool {
    std::env::var_os("KAFKA_WIRE_REQUIRE_PACKAGES").is_some()
}

/// Says why `what` skips, or fails under `KAFKA_WIRE_REQUIRE_PACKAGES`.
fn skip(what: &str, why: &str) {
    assert!(!required(), "KAFKA_WIRE_REQUIRE_PACKAGES is set, but {why}");
    eprintln!(
        "skipping the {what} package test: {why} (.ci/run's step \"install: the packages' test dependencies\" installs them)"
    );
}

/// Whether `program` runs (`program --version`).
fn runs(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The workspace's target directory (this test's `target/<profile>/deps/..`).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| workspace_root().join("target"))
}

/// Where the install step put the packages' test dependencies.
fn installed() -> PathBuf {
    target_dir().join("packages")
}

/// A fresh scratch directory `target/packages/run/NAME`.
fn scratch(name: &str) -> PathBuf {
    let dir = installed().join("run").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// A command without the variables cargo sets for this test, which would
/// mislead a cargo (or maturin) that it runs; the network closed for cargo.
fn command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = Command::new(program);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("CARGO_PKG_")
            || key.starts_with("CARGO_BIN_")
            || matches!(
                &*key,
                "CARGO_MANIFEST_DIR"
                    | "CARGO_MANIFEST_PATH"
                    | "CARGO_CRATE_NAME"
                    | "CARGO_PRIMARY_PACKAGE"
                    | "CARGO_TARGET_TMPDIR"
                    | "CARGO_MANIFEST_LINKS"
            )
        {
            command.env_remove(&*key);
        }
    }
    command.env("CARGO_NET_OFFLINE", "true");
    command
}

/// Runs `command` to the end, its output into `log`; panics, with the
/// log's end, unless it succeeds. Prints and returns its time.
fn run(what: &str, command: &mut Command, log: &Path) -> Duration {
    let began = Instant::now();
    let out = std::fs::File::create(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    let err = out.try_clone().expect("clone");
    let status = command
        .stdout(out)
        .stderr(err)
        .stdin(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("{what}: cannot run {command:?}: {e}"));
    let took = began.elapsed();
    let text = std::fs::read_to_string(log).unwrap_or_default();
    assert!(
        status.success(),
        "{what} failed ({status}); {}:\n{}",
        log.display(),
        tail(&text, 60)
    );
    println!("packages: {what}: {:.1} s", took.as_secs_f64());
    took
}

/// The last `lines` lines of `text`.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Bytes in the files under `path`.
fn size(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if meta.is_dir() {
        std::fs::read_dir(path)
            .map(|entries| entries.flatten().map(|e| size(&e.path())).sum())
            .unwrap_or(0)
    } else {
        meta.len()
    }
}

/// `bytes` in MiB, or KiB below one MiB.
fn mib(bytes: u64) -> String {
    if bytes < 1 << 20 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    }
}

/// Copies the files under `from` into `to` (made), leaving out `skip`.
fn copy_tree(from: &Path, to: &Path, skip: &[&str]) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let entry = entry.expect("entry");
        let name = entry.file_name();
        if skip.iter().any(|s| name == *s) {
            continue;
        }
        let target = to.join(&name);
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &target, skip);
        } else {
            std::fs::copy(entry.path(), &target)
                .unwrap_or_else(|e| panic!("{}: {e}", target.display()));
        }
    }
}

// ---- processes, by id ----------------------------------------------------

/// The fields of `/proc/PID/stat` after the command name: state, parent, ...
fn stat(pid: u32) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = text.rsplit_once(')')?.1;
    Some(after.split_whitespace().map(str::to_owned).collect())
}

/// Whether process `pid` runs (exists and is not a zombie, which has
/// exited and waits only to be reaped).
fn alive(pid: u32) -> bool {
    stat(pid).is_some_and(|fields| fields.first().is_some_and(|state| state != "Z"))
}

/// The parent of process `pid`.
fn parent(pid: u32) -> Option<u32> {
    stat(pid)?.get(1)?.parse().ok()
}

/// The command line of process `pid`.
fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([format!("-{name}"), pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{name} {pid}");
}

/// Waits at most `bound` for `child` to exit; kills it and panics if not.
fn wait_bounded(child: &mut Child, bound: Duration, what: &str) -> std::process::ExitStatus {
    let began = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        if began.elapsed() > bound {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: the test runner still ran after {bound:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits at most `bound` for process `pid` to be gone; the time it took.
fn gone_within(pid: u32, bound: Duration, what: &str) -> Duration {
    let began = Instant::now();
    while alive(pid) {
        assert!(
            began.elapsed() < bound,
            "{what}: the cluster (process {pid}: {}) still runs {bound:?} after its test process ended",
            cmdline(pid)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    began.elapsed()
}

/// Waits for the process id a lifetime check writes into `file`.
fn pid_from(file: &Path, runner: &mut Child, what: &str) -> u32 {
    let began = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(file) {
            if let Ok(pid) = text.trim().parse() {
                return pid;
            }
        }
        if let Some(status) = runner.try_wait().expect("try_wait") {
            panic!("{what}: the test runner ended ({status}) before its test started a cluster");
        }
        assert!(
            began.elapsed() < RUNNER_BOUND,
            "{what}: no cluster started in {RUNNER_BOUND:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The ways a test process ends that a wrapper must survive without
/// leaving its cluster running. `runner(mode, pid_file, log)` is the
/// command that runs a test which writes its cluster's process id into
/// `pid_file` and then fails (`fails`) or waits (`waits`).
fn lifetime_paths(package: &str, dir: &Path, runner: impl Fn(&str, &Path) -> Command) {
    for path in ["a failed test", "an interrupt", "a crash"] {
        let what = format!("{package}, {path}");
        let pid_file = dir.join(format!("pid-{}", path.replace(' ', "-")));
        let log = dir.join(format!("lifetime-{}.log", path.replace(' ', "-")));
        let mode = if path == "a failed test" {
            "fails"
        } else {
            "waits"
        };
        let out = std::fs::File::create(&log).expect("log");
        let mut child = runner(mode, &pid_file)
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("clone"))
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("{what}: cannot run the test runner: {e}"));
        let pid = pid_from(&pid_file, &mut child, &what);
        let holder = parent(pid);
        let status = match path {
            "a failed test" => wait_bounded(&mut child, RUNNER_BOUND, &what),
            _ => {
                assert!(alive(pid), "{what}: the cluster {pid} is not running");
                assert!(
                    cmdline(pid).contains("fake"),
                    "{what}: process {pid} is not a cluster: {}",
                    cmdline(pid)
                );
                let holder = holder.unwrap_or_else(|| panic!("{what}: no parent of {pid}"));
                signal(
                    holder,
                    if path == "an interrupt" {
                        "INT"
                    } else {
                        "KILL"
                    },
                );
                wait_bounded(&mut child, RUNNER_BOUND, &what)
            }
        };
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(
            !status.success(),
            "{what}: the test runner succeeded ({status}); {}:\n{}",
            log.display(),
            tail(&text, 30)
        );
        let took = gone_within(pid, GONE_WITHIN, &what);
        println!(
            "packages: {what}: the cluster (process {pid}, started by {}) was gone {} ms after the runner ended",
            holder.map_or("?".into(), |h| h.to_string()),
            took.as_millis()
        );
    }
}

// ---- the one release build ----------------------------------------------

/// The maturin version `kafka-protocol/python/pyproject.toml` pins.
fn pinned_maturin() -> String {
    let path = workspace_root().join("kafka-protocol/python/pyproject.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.split("maturin==")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("{}: no maturin==VERSION", path.display()))
        .to_owned()
}

/// What the Python side needs beside python3: the wheelhouse with the
/// pinned maturin, pytest and confluent-kafka; why not, when it is missing.
fn python_ready() -> Result<PathBuf, String> {
    if !runs("python3") {
        return Err("python3 is not installed".into());
    }
    let wheelhouse = installed().join("wheelhouse");
    let names: Vec<String> = std::fs::read_dir(&wheelhouse)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let maturin = format!("maturin-{}-", pinned_maturin());
    for wanted in [maturin.as_str(), "pytest-", "confluent_kafka-"] {
        if !names.iter().any(|n| n.starts_with(wanted)) {
            return Err(format!("{} holds no {wanted}*.whl", wheelhouse.display()));
        }
    }
    Ok(wheelhouse)
}

/// The wheel, built once: `pip wheel kafka-protocol/python` (maturin builds
/// the release binary), offline from the wheelhouse.
struct Wheel {
    path: PathBuf,
    binary: PathBuf,
}

fn wheel() -> Option<&'static Wheel> {
    static WHEEL: OnceLock<Option<Wheel>> = OnceLock::new();
    WHEEL
        .get_or_init(|| {
            let wheelhouse = python_ready().ok()?;
            let dir = scratch("wheel");
            run(
                "python: pip wheel kafka-protocol/python (maturin, the release build)",
                command("python3")
                    .args([
                        "-m",
                        "pip",
                        "wheel",
                        "--disable-pip-version-check",
                        "--no-index",
                    ])
                    .arg("--find-links")
                    .arg(&wheelhouse)
                    .args(["--no-deps", "-w"])
                    .arg(&dir)
                    .arg(workspace_root().join("kafka-protocol/python")),
                &installed().join("run/wheel.log"),
            );
            let path = std::fs::read_dir(&dir)
                .expect("wheel dir")
                .flatten()
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|e| e == "whl"))
                .expect("pip wheel wrote no wheel");
            println!(
                "packages: python: {} ({})",
                path.file_name().unwrap_or_default().to_string_lossy(),
                mib(size(&path))
            );
            // The binary the wheel carries, for the other two packages.
            let binary = dir.join("bin/kafka-protocol");
            extract_script(&path, "kafka-protocol", &binary);
            Some(Wheel { path, binary })
        })
        .as_ref()
}

/// Extracts `<dist>.data/scripts/NAME` from the wheel at `wheel` to `to`.
fn extract_script(wheel: &Path, name: &str, to: &Path) {
    use std::io::Read;
    let file = std::fs::File::open(wheel).expect("wheel");
    let mut zip = zip::ZipArchive::new(file).expect("a wheel is a zip");
    let entry_name = zip
        .file_names()
        .find(|n| n.ends_with(&format!(".data/scripts/{name}")))
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("{} holds no scripts/{name}", wheel.display()));
    let mut bytes = Vec::new();
    zip.by_name(&entry_name)
        .expect("entry")
        .read_to_end(&mut bytes)
        .expect("read");
    std::fs::create_dir_all(to.parent().expect("parent")).expect("dir");
    std::fs::write(to, bytes).expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
}

/// The release binary the packages carry: the wheel's, or where Python is
/// missing, `cargo build --release -p kafka-wire-cli`'s.
fn release_binary() -> PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY
        .get_or_init(|| {
            if let Some(wheel) = wheel() {
                return wheel.binary.clone();
            }
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            run(
                "cargo build --release -p kafka-wire-cli",
                command(cargo)
                    .args([
                        "build",
                        "--release",
                        "-p",
                        "kafka-wire-cli",
                        "--bin",
                        "kafka-protocol",
                    ])
                    .current_dir(workspace_root()),
                &installed().join("run/release-build.log"),
            );
            target_dir().join("release/kafka-protocol")
        })
        .clone()
}

// ---- Python ---------------------------------------------------------------

#[test]
fn python_package_from_its_wheel_in_a_new_venv() {
    let wheelhouse = match python_ready() {
        Ok(w) => w,
        Err(why) => return skip("Python", &why),
    };
    let wheel = wheel().expect("the wheel");
    let dir = scratch("python");
    let venv = dir.join("venv");
    run(
        "python: a new venv",
        command("python3").args(["-m", "venv"]).arg(&venv),
        &dir.join("venv.log"),
    );
    let python = venv.join("bin/python");
    let requirements = workspace_root().join("kafka-protocol/python/tests/requirements.txt");
    run(
        "python: pip install the wheel (with pytest and confluent-kafka, from the wheelhouse)",
        command(&python)
            .args([
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "--no-index",
            ])
            .arg("--find-links")
            .arg(&wheelhouse)
            .arg(&wheel.path)
            .arg("-r")
            .arg(&requirements),
        &dir.join("install.log"),
    );
    let site = venv
        .join("lib")
        .read_dir()
        .expect("lib")
        .flatten()
        .next()
        .expect("python3.X")
        .path();
    let installed_size =
        size(&site.join("site-packages/kafka_wire")) + size(&venv.join("bin/kafka-protocol"));
    println!("packages: python: installed size {}", mib(installed_size));
    assert!(
        venv.join("bin/kafka-protocol").is_file(),
        "the wheel installed no kafka-protocol"
    );

    // The example tests, in a directory of their own.
    let app = dir.join("app");
    copy_tree(
        &workspace_root().join("kafka-protocol/python/tests"),
        &app,
        &["__pycache__", "requirements.txt"],
    );
    let log = dir.join("pytest.log");
    run(
        "python: pytest with confluent-kafka",
        command(&python)
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .current_dir(&app),
        &log,
    );
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let summary = text
        .lines()
        .rev()
        .find(|l| l.contains(" passed"))
        .unwrap_or_default();
    println!("packages: python: {summary}");
    assert!(
        !summary.contains("failed") && summary.contains("passed"),
        "{text}"
    );

    lifetime_paths("python", &dir, |mode, pid_file| {
        let mut c = command(&python);
        c.args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .arg(format!("lifetime_check.py::test_{mode}"))
            .env("KAFKA_WIRE_PID_FILE", pid_file)
            .current_dir(&app);
        c
    });
}

// ---- JavaScript -----------------------------------------------------------

/// The test packages `kafka-protocol/npm/test/package.json` pins.
fn npm_test_packages() -> Vec<String> {
    let path = workspace_root().join("kafka-protocol/npm/test/package.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let json: serde_json::Value = serde_json::from_str(&text).expect("package.json");
    json["devDependencies"]
        .as_object()
        .map(|deps| deps.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn npm_packages_from_their_tarballs_in_an_empty_directory() {
    if !runs("node") || !runs("npm") {
        return skip("JavaScript", "node or npm is not installed");
    }
    let warm = installed().join("npm-warm/node_modules");
    if let Some(missing) = npm_test_packages()
        .into_iter()
        .find(|p| !warm.join(p).join("package.json").is_file())
    {
        return skip(
            "JavaScript",
            &format!(
                "{missing} is not in the npm cache ({} lacks it)",
                warm.display()
            ),
        );
    }
    let binary = release_binary();
    let dir = scratch("npm");
    let dist = dir.join("dist");
    let log = dir.join("pack.log");
    run(
        "npm: pack.sh (the main package and this platform's)",
        command("bash")
            .arg(workspace_root().join("kafka-protocol/npm/pack.sh"))
            .arg(&dist)
            .env("KAFKA_WIRE_BINARY", &binary),
        &log,
    );
    let tarballs: Vec<PathBuf> = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.ends_with(".tgz"))
        .map(PathBuf::from)
        .collect();
    assert_eq!(tarballs.len(), 2, "pack.sh printed {tarballs:?}");
    for tarball in &tarballs {
        println!(
            "packages: npm: {} ({})",
            tarball.file_name().unwrap_or_default().to_string_lossy(),
            mib(size(tarball))
        );
    }

    let app = dir.join("app");
    copy_tree(
        &workspace_root().join("kafka-protocol/npm/test"),
        &app,
        &["node_modules"],
    );
    run(
        "npm: npm install of the two tarballs (and the test packages), offline",
        command("npm")
            .args([
                "install",
                "--offline",
                "--no-package-lock",
                "--no-save",
                "--no-audit",
                "--no-fund",
            ])
            .args(&tarballs)
            .current_dir(&app),
        &dir.join("install.log"),
    );
    let modules = app.join("node_modules");
    let platforms: Vec<String> = std::fs::read_dir(modules.join("@kafka-wire"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        platforms.len(),
        1,
        "the platform packages installed: {platforms:?}"
    );
    let installed_size = size(&modules.join("kafka-wire")) + size(&modules.join("@kafka-wire"));
    println!(
        "packages: npm: installed size {} (kafka-wire and @kafka-wire/{})",
        mib(installed_size),
        platforms[0]
    );

    let log = dir.join("node-test.log");
    run(
        "npm: node:test with kafkajs",
        command("node")
            .args(["--test", "kafkajs.test.mjs"])
            .current_dir(&app),
        &log,
    );
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let pass = text
        .lines()
        .find(|l| l.starts_with("# pass "))
        .unwrap_or_default();
    let fail = text
        .lines()
        .find(|l| l.starts_with("# fail "))
        .unwrap_or_default();
    println!("packages: npm: node:test {pass}, {fail}");
    assert!(
        fail == "# fail 0" && pass != "# pass 0" && !pass.is_empty(),
        "{text}"
    );
    run(
        "npm: Jest",
        command("node")
            .args(["node_modules/jest/bin/jest.js", "--ci", "--rootDir", "jest"])
            .current_dir(&app),
        &dir.join("jest.log"),
    );
    run(
        "npm: Vitest",
        command("node")
            .args(["node_modules/vitest/vitest.mjs", "run", "--root", "vitest"])
            .env("NO_COLOR", "1")
            .current_dir(&app),
        &dir.join("vitest.log"),
    );
    run(
        "npm: the types under tsc --strict",
        command("node")
            .args(["node_modules/typescript/bin/tsc", "--noEmit", "--strict"])
            .args(["--module", "nodenext", "--moduleResolution", "nodenext"])
            .args(["--target", "es2022", "--lib", "es2022,dom", "types.ts"])
            .current_dir(&app),
        &dir.join("tsc.log"),
    );

    lifetime_paths("npm", &dir, |mode, pid_file| {
        let mut c = command("node");
        c.args(["--test", "lifetime_check.mjs"])
            .env("KAFKA_WIRE_LIFETIME", mode)
            .env("KAFKA_WIRE_PID_FILE", pid_file)
            .current_dir(&app);
        c
    });
}

// ---- Java -----------------------------------------------------------------

/// What the Java side needs in the local Maven repository; why not, when
/// something is missing.
fn maven_ready() -> Result<PathBuf, String> {
    if !runs("java") || !runs("mvn") {
        return Err("java or mvn is not installed".into());
    }
    let repository = kafka_wire_tests::maven_repository().ok_or("HOME is not set")?;
    for wanted in [
        "org/apache/kafka/kafka-clients/4.4.0",
        "org/junit/jupiter/junit-jupiter-engine/5.14.4",
        "org/apache/maven/surefire/surefire-junit-platform/3.5.2",
        "org/apache/maven/plugins/maven-enforcer-plugin/3.5.0",
    ] {
        if !repository.join(wanted).is_dir() {
            return Err(format!("{} lacks {wanted}", repository.display()));
        }
    }
    Ok(repository)
}

#[test]
fn junit_extension_from_the_local_maven_repository() {
    let repository = match maven_ready() {
        Ok(r) => r,
        Err(why) => return skip("Java", &why),
    };
    let binary = release_binary();
    let dir = scratch("junit");
    let module = workspace_root().join("kafka-protocol/junit");
    run(
        "junit: mvn install (the binary as a resource)",
        command("mvn")
            .args(["-B", "-q", "-o", "-f"])
            .arg(module.join("pom.xml"))
            .arg(format!(
                "-Dkafka-wire.binary.dir={}",
                binary.parent().expect("dir").display()
            ))
            .arg(format!(
                "-Dkafka-wire.build.directory={}",
                dir.join("build").display()
            ))
            .arg("install"),
        &dir.join("install.log"),
    );
    let jar = repository
        .join("dev/kafka-wire/kafka-wire-fake-junit/0.1.0/kafka-wire-fake-junit-0.1.0.jar");
    assert!(jar.is_file(), "mvn install put no {}", jar.display());
    println!(
        "packages: junit: installed size {} (the jar in the local repository)",
        mib(size(&jar))
    );

    let app = dir.join("example");
    copy_tree(&module.join("example"), &app, &["target"]);
    let log = dir.join("test.log");
    run(
        "junit: mvn test of the example with kafka-clients 4.4.0",
        command("mvn").args(["-B", "-o", "test"]).current_dir(&app),
        &log,
    );
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let summary = text
        .lines()
        .rfind(|l| l.contains("Tests run:") && !l.contains(" -- in "))
        .unwrap_or_default();
    println!("packages: junit: {}", summary.trim_start_matches("[INFO] "));
    assert!(summary.contains("Failures: 0, Errors: 0"), "{text}");

    lifetime_paths("junit", &dir, |mode, pid_file| {
        let mut c = command("mvn");
        c.args(["-B", "-o", "test"])
            .arg(format!("-Dtest=LifetimeCheck#{mode}"))
            .env("KAFKA_WIRE_PID_FILE", pid_file)
            .current_dir(&app);
        c
    });
}

/// The three packages and the crate have one version.
#[test]
fn the_packages_have_the_workspaces_version() {
    let root = workspace_root();
    let cargo = std::fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml");
    let version = cargo
        .split("[workspace.package]")
        .nth(1)
        .and_then(|s| s.lines().find(|l| l.starts_with("version")))
        .and_then(|l| l.split('"').nth(1))
        .expect("the workspace's version");
    let npm: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("kafka-protocol/npm/kafka-wire/package.json"))
            .expect("package.json"),
    )
    .expect("JSON");
    assert_eq!(npm["version"], version);
    for (name, pinned) in npm["optionalDependencies"]
        .as_object()
        .expect("optionalDependencies")
    {
        assert_eq!(pinned, version, "{name}");
    }
    for pom in [
        "kafka-protocol/junit/pom.xml",
        "kafka-protocol/junit/example/pom.xml",
    ] {
        let text = std::fs::read_to_string(root.join(pom)).expect("pom");
        assert!(
            text.contains(&format!("<artifactId>kafka-wire-fake-junit</artifactId>\n      <version>{version}</version>"))
                || text.contains(&format!("<artifactId>kafka-wire-fake-junit</artifactId>\n  <version>{version}</version>")),
            "{pom} does not name kafka-wire-fake-junit {version}"
        );
    }
    // The wheel takes the crate's version (pyproject.toml: dynamic).
    let pyproject = std::fs::read_to_string(root.join("kafka-protocol/python/pyproject.toml"))
        .expect("pyproject");
    assert!(pyproject.contains("dynamic = [\"version\"]"));
}
