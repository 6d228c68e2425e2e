//! What library users build: the message codec compiles none of the other
//! packages, and the default features of kafka-wire and kafka-codegen pull
//! in none of the command-line tools' dependencies.
//! Asks cargo for the dependency tree, offline (the lock file and the
//! downloaded sources are there after the build that runs this test).

use std::process::Command;

use kafka_wire_tests::workspace_root;

/// The crate names in the normal and build dependency tree of `package`.
fn dependencies(package: &str, features: &[&str]) -> Vec<String> {
    dependency_tree(package, features, "normal,build")
}

/// The crate names in the dependency tree of `package` along `edges`
/// (`cargo tree -e`).
fn dependency_tree(package: &str, features: &[&str], edges: &str) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = workspace_root().join("Cargo.toml");
    let mut command = Command::new(cargo);
    command
        .args(["tree", "--offline", "--prefix", "none", "-e", edges])
        .args(["--format", "{p}", "-p", package, "--manifest-path"])
        .arg(&manifest);
    if !features.is_empty() {
        command.args(["--features", &features.join(",")]);
    }
    let output = command.output().expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// The message codec alone: depending on kafka-wire, with any of its
/// features, compiles none of the other packages (record batches and their
/// codecs, the proxy, the command-line tool) and none of their dependencies.
#[test]
fn the_message_codec_compiles_none_of_the_other_packages() {
    for features in [&[][..], &["json", "tokio"]] {
        let tree = dependencies("kafka-wire", features);
        assert!(tree.iter().any(|c| c == "bytes"), "{tree:?}");
        for other in [
            "kafka-wire-records",
            "kafka-wire-proxy",
            "kafka-wire-cli",
            "clap",
            "hex",
            "flate2",
            "snap",
            "lz4_flex",
            "zstd",
            "crc32c",
        ] {
            assert!(
                !tree.iter().any(|c| c == other),
                "{features:?}: {other} in {tree:?}"
            );
        }
    }
}

/// The command-line tool is the package that builds clap.
#[test]
fn the_command_line_tool_builds_clap() {
    let tree = dependencies("kafka-wire-cli", &[]);
    for needed in [
        "clap",
        "kafka-wire",
        "kafka-wire-records",
        "kafka-wire-proxy",
    ] {
        assert!(tree.iter().any(|c| c == needed), "{needed} not in {tree:?}");
    }
    for library in ["kafka-wire-records", "kafka-wire-proxy"] {
        let tree = dependencies(library, &[]);
        assert!(!tree.iter().any(|c| c == "clap"), "clap in {tree:?}");
    }
}

/// kafka-wire ships its generated source: a user's build compiles no
/// generator and none of its dependencies, unless it asks for `regenerate`.
#[test]
fn the_message_codec_builds_no_generator() {
    for features in [&[][..], &["json", "tokio"]] {
        let tree = dependencies("kafka-wire", features);
        for generator in [
            "kafka-codegen",
            "syn",
            "quote",
            "proc-macro2",
            "prettyplease",
            "nom",
            "heck",
        ] {
            assert!(
                !tree.iter().any(|c| c == generator),
                "{features:?}: {generator} in {tree:?}"
            );
        }
    }
    let tree = dependencies("kafka-wire", &["regenerate"]);
    assert!(
        tree.iter().any(|c| c == "kafka-codegen"),
        "regenerate runs the generator: {tree:?}"
    );
}

#[test]
fn the_generator_library_builds_no_clap() {
    let tree = dependencies("kafka-codegen", &[]);
    assert!(tree.iter().any(|c| c == "prettyplease"), "{tree:?}");
    assert!(!tree.iter().any(|c| c == "clap"), "clap in {tree:?}");
    let with_cli = dependencies("kafka-codegen", &["cli"]);
    assert!(
        with_cli.iter().any(|c| c == "clap"),
        "the cli feature builds clap"
    );
}

/// The JSON form is as much code again as the codec: only the `json` feature
/// (which the CLI turns on) compiles it and serde_json into the library.
#[test]
fn the_library_with_default_features_compiles_no_json_form() {
    let tree = dependency_tree("kafka-wire", &[], "normal");
    assert!(tree.iter().any(|c| c == "bytes"), "{tree:?}");
    for crate_name in ["serde_json", "serde"] {
        assert!(
            !tree.iter().any(|c| c == crate_name),
            "{crate_name} in {tree:?}"
        );
    }
    for (package, features) in [("kafka-wire", &["json"][..]), ("kafka-wire-cli", &[])] {
        let tree = dependency_tree(package, features, "normal");
        assert!(
            tree.iter().any(|c| c == "serde_json"),
            "{package} {features:?} builds serde_json: {tree:?}"
        );
    }
}
