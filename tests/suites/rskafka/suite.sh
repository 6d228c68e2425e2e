#!/usr/bin/env bash
# tests/suites/rskafka/suite.sh: rskafka's own integration tests, from its
# crate as published (it ships tests/), against Kafka 4.4.0 or the fake.
# Called by tests/suites/run.sh (see tests/suites/run.sh and the contract
# there):
#
#   suite.sh install              fetches the crate, the Rust toolchain it
#                                 pins and kafka-clients 3.5.0 with the jars
#                                 its Java interop loads, and builds the
#                                 tests (online)
#   suite.sh run kafka|fake [--brokers N]
#                                 starts the target, runs the tests offline,
#                                 writes one line per test to $SUITE_TSV
#
# The settings are those of rskafka's README and compose file: brokers
# that do not create topics on their own, a SASL_PLAINTEXT listener where
# user `admin` authenticates with PLAIN and password `admin-secret`
# (KAFKA_SASL_CONNECT), and the Java interop on (TEST_JAVA_INTEROPT=1):
# kafka-clients 3.5.0 through j4rs, which takes its jars from ~/.m2.
#
# rskafka 0.6.0 pins Rust 1.85 (rust-toolchain.toml); its dependency rsasl
# 2.2.0 does not build on later compilers, so the tests build and run on
# that toolchain, with the crate's own Cargo.lock (--locked). Its unit and
# integration tests run (`--tests`); its four doc tests need no broker.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../../.." && pwd)"
VERSION=0.6.0
TOOLCHAIN=1.85
HOME_DIR="$ROOT/target/suites/rskafka"
CRATE="$HOME_DIR/rskafka-$VERSION"
STAMP="$HOME_DIR/installed"
# What rskafka's tests/java_helper.rs deploys through j4rs, which copies
# each jar from ~/.m2 before it would go online.
JARS=(
    org.apache.kafka:kafka-clients:3.5.0
    org.apache.commons:commons-lang3:3.12.0
    org.lz4:lz4-java:1.8.0
    org.xerial.snappy:snappy-java:1.1.10.2
    com.github.luben:zstd-jni:1.5.5-5
    org.slf4j:slf4j-api:2.0.7
)
# The user and password of tests/client.rs's test_sasl.
SASL_USER=admin SASL_PASSWORD=admin-secret
MVN="${MVN:-mvn}"

# shellcheck source=tests/suites/crates.sh
source "$ROOT/tests/suites/crates.sh"
export CARGO_TARGET_DIR="$HOME_DIR/target"
export CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_DEBUG=line-tables-only

log() { echo "== rskafka: $*" >&2; }

install() {
    mkdir -p "$HOME_DIR"
    log "the Rust $TOOLCHAIN toolchain (rskafka's rust-toolchain.toml)"
    rustup toolchain install "$TOOLCHAIN" --profile minimal >/dev/null
    log "the rskafka $VERSION crate"
    unpack_crate rskafka "$VERSION" "$HOME_DIR"
    log "kafka-clients 3.5.0 and the jars rskafka's Java interop loads, into ~/.m2"
    # One Maven run: a throwaway project that depends on each jar alone.
    local pom="$HOME_DIR/jars/pom.xml" jar group artifact version
    mkdir -p "$HOME_DIR/jars"
    {
        echo '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        echo '<groupId>local</groupId><artifactId>rskafka-jars</artifactId><version>0</version><dependencies>'
        for jar in "${JARS[@]}"; do
            IFS=: read -r group artifact version <<<"$jar"
            echo "<dependency><groupId>$group</groupId><artifactId>$artifact</artifactId><version>$version</version>"
            echo '<exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion></exclusions></dependency>'
        done
        echo '</dependencies></project>'
    } >"$pom"
    "$MVN" -B -q -f "$pom" dependency:resolve >/dev/null
    log "building the tests (cargo +$TOOLCHAIN test --no-run --locked)"
    (cd "$CRATE" && cargo "+$TOOLCHAIN" test --locked --no-run --tests) >"$HOME_DIR/build.log" 2>&1 ||
        { tail -n 40 "$HOME_DIR/build.log" >&2; exit 1; }
    echo "rskafka $VERSION" >"$STAMP"
    log "installed in ${HOME_DIR#"$ROOT"/}"
}

run() {
    local target=${1:?usage: suite.sh run kafka|fake [--brokers N]}
    shift
    local brokers=1
    while (($#)); do
        case $1 in
        --brokers) brokers=${2:?--brokers needs a count} && shift 2 ;;
        *) echo "error: unknown option $1" >&2 && exit 2 ;;
        esac
    done
    [[ -f $STAMP ]] || { echo "rskafka is not installed (tests/suites/run.sh rskafka --install-only)" >&2; exit 77; }
    : "${SUITE_TSV:?SUITE_TSV must name the outcome file}"

    # Global: the EXIT trap reads it after run() returns.
    work=$(mktemp -d "${TMPDIR:-/tmp}/suite-rskafka.XXXXXX")
    cleanup() {
        stop_fakes "$work"
        [[ -d $work/kafka ]] && bash "$ROOT/tests/kafka/broker.sh" stop "$work/kafka"
        rm -rf "$work"
    }
    trap cleanup EXIT INT TERM

    local bootstrap sasl_bootstrap
    case $target in
    kafka)
        bash "$ROOT/tests/kafka/broker.sh" start "$work/kafka" --brokers "$brokers" --owner $$ \
            --sasl "$SASL_USER:$SASL_PASSWORD" --config auto.create.topics.enable=false >"$work/kafka.env"
        bootstrap=$(sed -n 's/^bootstrap=//p' "$work/kafka.env")
        sasl_bootstrap=$(sed -n 's/^sasl_bootstrap=//p' "$work/kafka.env")
        ;;
    fake)
        # Kafka's SASL listener is a second listener of the same brokers;
        # the fake asks for SASL on every listener of a cluster with users,
        # so here it is a second cluster, set up the same way, that
        # tests/client.rs's test_sasl connects to.
        bootstrap=$(start_fake "$work/fake" "$brokers" --no-auto-create)
        sasl_bootstrap=$(start_fake "$work/fake-sasl" "$brokers" --no-auto-create \
            --sasl "PLAIN:$SASL_USER:$SASL_PASSWORD")
        # test_sasl takes one address, as Kafka's SASL listener is one.
        sasl_bootstrap=${sasl_bootstrap%%,*}
        ;;
    *) echo "error: unknown target $target" >&2 && exit 2 ;;
    esac
    [[ -n $bootstrap && -n $sasl_bootstrap ]] || { echo "error: $target did not start" >&2; exit 1; }

    log "running against $target ($bootstrap, SASL $sasl_bootstrap)"
    local status=0
    (cd "$CRATE" && TEST_INTEGRATION=1 TEST_BROKER_IMPL=kafka KAFKA_CONNECT="$bootstrap" \
        KAFKA_SASL_CONNECT="$sasl_bootstrap" TEST_JAVA_INTEROPT=1 RUST_BACKTRACE=0 \
        cargo "+$TOOLCHAIN" test --offline --locked --no-fail-fast --tests -- --format pretty \
        >"$work/test.log" 2>&1) || status=$?
    libtest_outcomes <"$work/test.log" >"$SUITE_TSV"
    if [[ ! -s $SUITE_TSV ]]; then
        tail -n 40 "$work/test.log" >&2
        echo "error: the tests did not run (cargo test exited $status)" >&2
        exit 1
    fi
    cp "$work/test.log" "${SUITE_TSV%.tsv}.log"
}

case ${1:-} in
install) install ;;
run)
    shift
    run "$@"
    ;;
*)
    echo "usage: suite.sh install | suite.sh run kafka|fake [--brokers N]" >&2
    exit 2
    ;;
esac
