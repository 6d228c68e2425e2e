#!/usr/bin/env bash
# tests/suites/sarama/suite.sh: sarama's functional tests (the IBM/sarama Go
# module at the version pinned in go.mod here, as published, unmodified:
# `go test -tags functional`) against five brokers, node ids 1 to 5, each
# reached through a toxiproxy proxy: kafka1 to kafka5 on
# 127.0.0.1:29091-29095, as sarama's own docker-compose.yml sets them up.
# Each broker advertises its proxy's address, so that every connection a
# client makes after its first Metadata goes through a proxy too (the tests
# cut, slow and reset them).
#
#   suite.sh install            (online) downloads the pinned sarama module
#                               and its test dependencies into the Go module
#                               cache, compiles its functional tests once
#                               (the Go build cache keeps them), and builds
#                               toxiproxy's server (v2.5.0) into
#                               target/suites/sarama/
#   suite.sh run kafka|fake     (offline: GOFLAGS=-mod=mod GOPROXY=off)
#                               starts toxiproxy on loopback, creates the
#                               five proxies through its HTTP API, starts the
#                               target, points each proxy at its broker, runs
#                               the tests with -json and writes one line per
#                               top-level test to $SUITE_TSV
#
# The target's settings are those of sarama's docker-compose.yml, as far as
# each has them: on both, node ids 1 to 5 with rack = id and auto-creation
# off; on Kafka also default replication factor 2, offsets and transaction
# state topics with 2 replicas, the rack-aware replica selector and no
# delay before a group's first rebalance (the fake has no replication to
# set: a topic created without a factor gets min(3, brokers) replicas,
# always in sync, and a group's first rebalance never waits). The brokers:
#   kafka: tests/kafka/broker.sh start DIR --brokers 5 --advertise
#          ID=127.0.0.1:2909ID ... (a CLIENT listener per broker, advertised as
#          its proxy; brokers talk among themselves on their own listener, as
#          the compose file's LISTENER_INTERNAL), Kafka 4.4.0;
#   fake:  kafka-protocol fake --brokers 5 --node-id 1 .. --node-id 5
#          --advertise ID=127.0.0.1:2909ID --rack ID=ID ... --no-auto-create
#          ($KAFKA_PROTOCOL, default target/release then
#          target/debug/kafka-protocol).
# On both, the group coordinators are readied first (warm_up below).
# There is one setting only: the tests need five brokers (their topics have
# three replicas, and they reach each broker through its own proxy).
#
# Not run, listed as skipped: the tests that call `docker compose` to stop
# and start a broker or to read its logs, which cannot run here (DOCKER_TESTS
# below). Sarama's Java interop tests skip themselves against an existing
# environment, as here.
#
# For a closer look: SARAMA_RUN=REGEX runs only the tests it matches
# (go test -run), SARAMA_TIMEOUT the whole run's limit (default 20m), and
# DEBUG=true has sarama log (into the run's events.json),
# SARAMA_FAKE_ARGS adds arguments to the fake's (such as --capture FILE);
# everything a run wrote stays in target/suites/sarama/run-TARGET/.
#
# Exit status: 0 when the suite ran, 77 when the install step has not run,
# 1 when it could not run. Needs go, curl, python3 and, for both targets,
# the kafka-protocol binary ($KAFKA_PROTOCOL, or target/release then
# target/debug), whose `request` readies the group coordinators.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../../.." && pwd)"
HERE="$ROOT/tests/suites/sarama"
WORK="$ROOT/target/suites/sarama"
TOXIPROXY_VERSION=v2.5.0
# The first port of the five proxies, as sarama's tests hard-code them.
PROXY_BASE=29090
KAFKA_VERSION=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$ROOT/tests/java/pom.xml" | head -n 1)
DOCKER_TESTS=(
    TestFuncAdminListConsumerGroupOffsets
    TestConsumerFetchFollowerFailover
    TestFuncTxnProduceWithBrokerFailure
    TestFuncIdempotentBufferedSequence
)
DOCKER_REASON="calls docker compose (to stop and start a broker or read its logs), which cannot run here"

die() {
    echo "error: $*" >&2
    exit 1
}

sarama_version() {
    sed -n 's:^[[:space:]]*github.com/IBM/sarama \(v[^ ]*\).*:\1:p' "$HERE/go.mod" | head -n 1
}

cmd_install() {
    local version started=$SECONDS
    version=$(sarama_version)
    mkdir -p "$WORK/bin"
    rm -f "$WORK/installed"
    echo "sarama $version: the module and its test dependencies"
    (cd "$HERE" && go mod download)
    echo "sarama $version: compiling its functional tests (kept by the Go build cache)"
    (cd "$HERE" && go test -tags functional -c -o "$WORK/sarama.test" github.com/IBM/sarama)
    echo "toxiproxy $TOXIPROXY_VERSION: its server"
    GOBIN="$WORK/bin" go install "github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION"
    mv "$WORK/bin/server" "$WORK/toxiproxy-server"
    echo "$version toxiproxy $TOXIPROXY_VERSION" >"$WORK/installed"
    echo "sarama installed in $((SECONDS - started)) s"
}

# The kafka-protocol binary for `fake`.
kafka_protocol() {
    local bin
    for bin in "${KAFKA_PROTOCOL:-}" "$ROOT/target/release/kafka-protocol" "$ROOT/target/debug/kafka-protocol"; do
        [[ -n $bin && -x $bin ]] && { echo "$bin"; return; }
    done
    die "no kafka-protocol binary (build it, or set KAFKA_PROTOCOL)"
}

listening() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# toxiproxy's HTTP API: METHOD PATH [JSON].
api() {
    curl -sS --fail-with-body -X "$1" ${3:+-H 'Content-Type: application/json' -d "$3"} "$TOXIPROXY/$2"
}

STARTED=() KAFKA_DIR="" TOXIPROXY=""
# Stops what the run started: Kafka through broker.sh, the rest with
# SIGTERM, then SIGKILL for what still runs after 10 s.
cleanup() {
    local pid i running
    if [[ -n $KAFKA_DIR ]]; then bash "$ROOT/tests/kafka/broker.sh" stop "$KAFKA_DIR" || true; fi
    for pid in ${STARTED[@]+"${STARTED[@]}"}; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for ((i = 0; i < 100; i++)); do
        running=0
        for pid in ${STARTED[@]+"${STARTED[@]}"}; do
            kill -0 "$pid" 2>/dev/null && running=1
        done
        ((running)) || break
        sleep 0.1
    done
    for pid in ${STARTED[@]+"${STARTED[@]}"}; do
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
}

# Starts toxiproxy's server on a free loopback port; sets TOXIPROXY.
start_toxiproxy() {
    local port attempt i
    for ((attempt = 0; attempt < 5; attempt++)); do
        port=$((40000 + RANDOM % 10000))
        listening "$port" && continue
        "$WORK/toxiproxy-server" -host 127.0.0.1 -port "$port" >"$RUN/toxiproxy.log" 2>&1 &
        STARTED+=($!)
        TOXIPROXY="http://127.0.0.1:$port"
        for ((i = 0; i < 100; i++)); do
            if curl -sf "$TOXIPROXY/version" >/dev/null 2>&1; then return 0; fi
            kill -0 "${STARTED[-1]}" 2>/dev/null || break
            sleep 0.1
        done
    done
    cat "$RUN/toxiproxy.log" >&2
    die "toxiproxy did not start"
}

# Starts Kafka; writes each broker's client address (to put behind its
# proxy) to $RUN/upstreams, one per line in node-id order.
start_kafka() {
    local args=(--brokers 5 --owner $$ --timeout 300) id
    for id in 1 2 3 4 5; do
        args+=(--advertise "$id=127.0.0.1:$((PROXY_BASE + id))" --node-config "$id:broker.rack=$id")
    done
    # sarama's docker-compose.yml (KAFKA_CFG_*), and Kafka's defaults
    # where broker.sh sets its own for a single node.
    args+=(
        --config auto.create.topics.enable=false
        --config default.replication.factor=2
        --config offsets.topic.replication.factor=2
        --config offsets.topic.num.partitions=50
        --config transaction.state.log.replication.factor=2
        --config transaction.state.log.num.partitions=50
        --config transaction.state.log.min.isr=2
        --config replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector
        --config group.initial.rebalance.delay.ms=0
    )
    KAFKA_DIR="$RUN/kafka"
    bash "$ROOT/tests/kafka/broker.sh" start "$KAFKA_DIR" "${args[@]}" >"$RUN/kafka.env" || die "Kafka did not start"
    for id in 1 2 3 4 5; do
        sed -n "s/^node\.$id\.client=//p" "$RUN/kafka.env"
    done >"$RUN/upstreams"
}

# Starts the fake; writes each broker's listening address to
# $RUN/upstreams, one per line in node-id order.
start_fake() {
    local bin args=(fake --brokers 5 --no-auto-create) id i line
    bin=$(kafka_protocol)
    for id in 1 2 3 4 5; do
        args+=(--node-id "$id" --advertise "$id=127.0.0.1:$((PROXY_BASE + id))" --rack "$id=$id")
    done
    : >"$RUN/fake.out"
    "$bin" "${args[@]}" ${SARAMA_FAKE_ARGS:-} >"$RUN/fake.out" 2>"$RUN/fake.log" &
    STARTED+=($!)
    for ((i = 0; i < 300; i++)); do
        line=$(sed -n 's/^bootstrap //p' "$RUN/fake.out")
        [[ -n $line ]] && break
        kill -0 "${STARTED[-1]}" 2>/dev/null || break
        sleep 0.1
    done
    [[ -n $line ]] || { cat "$RUN/fake.log" >&2; die "the fake did not start"; }
    tr ',' '\n' <<<"$line" >"$RUN/upstreams"
}

# Readies the group coordinators before the tests, through the proxies, as
# a cluster that has served groups before is: for a few groups (spread
# over the partitions of __consumer_offsets), FindCoordinator until it
# names one, then OffsetFetch there until it answers without an error.
# Against a fresh Kafka the first test, which commits offsets at once,
# otherwise meets NOT_COORDINATOR while those partitions load.
warm_up() {
    python3 - "$(kafka_protocol)" "127.0.0.1:$((PROXY_BASE + 1))" <<'EOF'
import json, subprocess, sys, time
bin, bootstrap = sys.argv[1], sys.argv[2]
deadline = time.monotonic() + 120

def request(address, api, version, body):
    run = subprocess.run(
        [bin, "request", "--compact", "--timeout-ms", "5000", "--bootstrap", address,
         "--api", api, "--version", str(version)],
        input=json.dumps(body), capture_output=True, text=True)
    try:
        return json.loads(run.stdout)
    except ValueError:
        return {"failed": (run.stdout + run.stderr).strip()}

def codes(value):
    if isinstance(value, dict):
        for key, field in value.items():
            if (key == "errorCode" or key.endswith("ErrorCode")) and isinstance(field, int):
                yield field
            else:
                yield from codes(field)
    elif isinstance(value, list):
        for item in value:
            yield from codes(item)

for n in range(1, 17):
    group = f"sarama-suite-warm-up-{n}"
    while True:
        answer = request(bootstrap, "FindCoordinator", 4,
                         {"keyType": 0, "coordinatorKeys": [group]})
        found = (answer.get("coordinators") or [{}])[0]
        if found.get("errorCode") == 0:
            address = f"{found['host']}:{found['port']}"
            answer = request(address, "OffsetFetch", 8,
                             {"groups": [{"groupId": group, "topics": None}]})
            if "failed" not in answer and all(code == 0 for code in codes(answer)):
                break
        if time.monotonic() > deadline:
            sys.exit(f"error: the group coordinators were not ready within 120 s (last answer: {answer})")
        time.sleep(0.25)
EOF
}

# Turns `go test -json` events ($1) into the outcome file ($2): one line per
# top-level test; WHY is the first line a failing test wrote with a file and
# line (its first assertion), or a skip's message.
events_to_tsv() {
    python3 - "$1" "$2" "$DOCKER_REASON" "${DOCKER_TESTS[@]}" <<'EOF'
import json, re, sys
events, tsv, docker_reason, docker = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
outcome, output, order = {}, {}, []
with open(events, encoding="utf-8", errors="replace") as f:
    for line in f:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        test = event.get("Test")
        if not test or "/" in test:
            continue
        if test not in output:
            output[test] = []
            order.append(test)
        action = event.get("Action")
        if action == "output":
            output[test].append(event.get("Output", ""))
        elif action in ("pass", "fail", "skip"):
            outcome[test] = {"pass": "passed", "fail": "failed", "skip": "skipped"}[action]
located = re.compile(r"^\s+(\S+\.go:\d+): (.*)")
label = re.compile(r"^\s+(Error Trace|Error|Test|Messages):\s*(.*)")
def why(test):
    """The first failure a test wrote: `file.go:N: message`, or for a
    testify assertion its Error and Messages blocks; else its first line."""
    lines = [text.rstrip("\n") for text in "".join(output.get(test, [])).split("\n")]
    for i, text in enumerate(lines):
        m = located.match(text)
        if not m:
            continue
        where, message = m.group(1), m.group(2).strip()
        if message:
            return f"{where}: {message}"
        parts, current = [], None
        for follow in lines[i + 1:]:
            l = label.match(follow)
            if l:
                current = l.group(1)
                if current in ("Error", "Messages"):
                    parts.append(l.group(2).strip())
                continue
            if located.match(follow) or not follow.startswith((" ", "\t")):
                break
            if current in ("Error", "Messages"):
                parts.append(follow.strip())
        return f"{where}: {' '.join(p for p in parts if p)}"
    for text in lines:
        text = text.strip()
        if text and not text.startswith(("=== ", "--- ")):
            return text
    return ""
with open(tsv, "w", encoding="utf-8") as out:
    for test in order:
        state = outcome.get(test, "failed")
        if test not in outcome:
            reason = "did not finish (the run timed out or crashed)"
        elif state == "passed":
            reason = ""
        else:
            reason = why(test)
        reason = re.sub(r"\s+", " ", reason)[:300]
        out.write(f"{test}\t{state}\t{reason}\n")
    for test in docker:
        if test not in output:
            out.write(f"{test}\tskipped\t{docker_reason}\n")
EOF
}

cmd_run() {
    local target=${1:-}
    shift || true
    [[ $target == kafka || $target == fake ]] || die "usage: suite.sh run kafka|fake"
    (($# == 0)) || [[ $* == "--brokers 5" ]] || die "sarama's tests need five brokers; no other option"
    [[ -n ${SUITE_TSV:-} ]] || die "SUITE_TSV is not set"
    local version
    version=$(sarama_version)
    if [[ ! -x $WORK/toxiproxy-server || $(cat "$WORK/installed" 2>/dev/null) != "$version toxiproxy $TOXIPROXY_VERSION" ]]; then
        echo "sarama $version is not installed: run tests/suites/run.sh sarama --install-only" >&2
        exit 77
    fi
    command -v python3 >/dev/null || die "python3 is needed"
    RUN="$WORK/run-$target"
    rm -rf "$RUN"
    mkdir -p "$RUN"
    trap cleanup EXIT
    trap 'exit 1' INT TERM

    local id
    for id in 1 2 3 4 5; do
        listening $((PROXY_BASE + id)) && die "port $((PROXY_BASE + id)) is taken: sarama's tests need 29091-29095"
    done
    start_toxiproxy
    # The proxies first, so that their ports are taken before the target
    # picks free ones; each points at its broker once that has started.
    for id in 1 2 3 4 5; do
        api POST proxies "{\"name\":\"kafka$id\",\"listen\":\"127.0.0.1:$((PROXY_BASE + id))\",\"upstream\":\"127.0.0.1:9\",\"enabled\":true}" >/dev/null
    done
    if [[ $target == kafka ]]; then start_kafka; else start_fake; fi
    local upstream
    id=0
    while read -r upstream; do
        id=$((id + 1))
        api POST "proxies/kafka$id" "{\"upstream\":\"$upstream\"}" >/dev/null
    done <"$RUN/upstreams"
    ((id == 5)) || die "expected five brokers, got $id"
    warm_up

    local skip
    skip="^($(IFS='|'; echo "${DOCKER_TESTS[*]}"))\$"
    echo "sarama $version on $target: go test -tags functional (toxiproxy at $TOXIPROXY)" >&2
    (
        cd "$HERE"
        TOXIPROXY_ADDR=$TOXIPROXY KAFKA_VERSION=$KAFKA_VERSION GOFLAGS=-mod=mod GOPROXY=off \
            go test -tags functional -json -count=1 -vet=off -timeout "${SARAMA_TIMEOUT:-20m}" \
            -skip "$skip" ${SARAMA_RUN:+-run "$SARAMA_RUN"} github.com/IBM/sarama
    ) >"$RUN/events.json" 2>"$RUN/go-test.err" || true
    events_to_tsv "$RUN/events.json" "$SUITE_TSV"
    [[ -s $SUITE_TSV ]] || { tail -n 30 "$RUN/go-test.err" "$RUN/events.json" >&2; die "the tests did not run"; }
}

case ${1:-} in
install) cmd_install ;;
run)
    shift
    cmd_run "$@"
    ;;
*)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
