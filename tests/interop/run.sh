#!/usr/bin/env bash
# Interop suite: real Kafka clients against `kafka-protocol fake` (the fake
# cluster of kafka-wire-fake): every flow on one broker, then the client
# flows again on three brokers, where partitions and group coordinators are
# spread over the brokers.
#
#   bash tests/interop/run.sh                    # install clients, run everything
#   bash tests/interop/run.sh --update-fixtures  # also refresh fixtures/clients/
#   bash tests/interop/run.sh --install-only     # install the clients, run nothing
#                                                # (.ci/run, for tests/tests/chaos.rs)
#
# For each client (kcat, kafka-python, confluent-kafka, kafkajs): produce
# three messages with keys, values, headers and timestamps per codec (none, gzip,
# snappy, lz4, zstd), idempotently; check in the broker's capture that every
# Produce batch carries the codec asked for (no silent fallback to none);
# consume them back in a consumer group, commit and leave; check that exactly
# the produced keys, values and headers came back, in order. Then two cross
# runs: kcat -> kafkajs and kafka-python -> confluent-kafka. Then raw-socket
# edge cases (clients/edge_cases.py). Then every client runs its whole flow
# again through `kafka-protocol proxy` (started with --log; one broker): the log must
# hold decoded Produce, Fetch and Metadata exchanges of each client, and no
# response in it may carry the broker's own port (clients/proxy_log.py); the
# proxy must exit 0 on SIGTERM. Then the tenant_proxy example: kcat produces
# and consumes `orders` through it, and reads `tenant-a.orders` directly.
# The one-broker fake must exit 0 on SIGTERM. Last, a three-broker fake:
# each client produces and consumes again, with the same checks, and that
# fake too must exit 0 on SIGTERM.
#
# Installs: kcat from Debian (apt-get), the pinned PyPI packages of
# requirements.txt into target/interop/venv, the pinned npm packages below
# into tests/interop/kafkajs/node_modules (no lock file is written).
# Work files and the capture go to target/interop/.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
HERE="$ROOT/tests/interop"
CLIENTS="$HERE/clients"
WORK="$ROOT/target/interop"
CAPTURE="$WORK/capture.jsonl"
VENV="$WORK/venv"
TIMEOUT=60
CODECS="none,gzip,snappy,lz4,zstd"
NPM_PACKAGES=(kafkajs@2.2.4 kafkajs-snappy@1.1.0 lz4js@0.2.0 @bokuweb/zstd-wasm@0.0.27 fzstd@0.1.1)
UPDATE_FIXTURES=0
INSTALL_ONLY=0
[[ "${1:-}" == "--update-fixtures" ]] && UPDATE_FIXTURES=1
[[ "${1:-}" == "--install-only" ]] && INSTALL_ONLY=1

BROKER_PID=""
STEP_PID=""
PROXY_PID=""
cleanup() {
    if [[ -n "$PROXY_PID" ]] && kill -0 "$PROXY_PID" 2>/dev/null; then
        kill -TERM "$PROXY_PID" 2>/dev/null || true
        wait "$PROXY_PID" 2>/dev/null || true
    fi
    if [[ -n "$STEP_PID" ]] && kill -0 "$STEP_PID" 2>/dev/null; then
        kill -TERM "$STEP_PID" 2>/dev/null || true
        wait "$STEP_PID" 2>/dev/null || true
    fi
    if [[ -n "$BROKER_PID" ]] && kill -0 "$BROKER_PID" 2>/dev/null; then
        kill -TERM "$BROKER_PID" 2>/dev/null || true
        wait "$BROKER_PID" 2>/dev/null || true
    fi
}
trap cleanup EXIT

log() { echo "== $*"; }

# ---------------------------------------------------------------- installs
install_clients() {
    if ! command -v kcat >/dev/null; then
        log "installing kcat (Debian)"
        apt-get update -q
        apt-get install -y -q kcat
    fi
    if [[ ! -x "$VENV/bin/python" ]]; then
        log "creating $VENV"
        python3 -m venv "$VENV"
    fi
    if ! cmp -s "$HERE/requirements.txt" "$VENV/.requirements.txt"; then
        log "installing the Python clients (pinned)"
        "$VENV/bin/pip" install -q --disable-pip-version-check -r "$HERE/requirements.txt"
        cp "$HERE/requirements.txt" "$VENV/.requirements.txt"
    fi
    local stamp="$HERE/kafkajs/node_modules/.interop-installed"
    if [[ "$(cat "$stamp" 2>/dev/null)" != "${NPM_PACKAGES[*]}" ]]; then
        log "installing kafkajs and its codecs (pinned, no lock file)"
        (cd "$HERE/kafkajs" && npm install --no-package-lock --no-save --no-audit --no-fund \
            "${NPM_PACKAGES[@]}")
        echo "${NPM_PACKAGES[*]}" >"$stamp"
    fi
}

# ---------------------------------------------------------------- broker
# One build, with the features `cargo test --workspace --all-features` uses, so
# CI reuses the library it already compiled rather than building (and storing)
# another copy for each feature set.
build_binaries() {
    cargo build -q --workspace --all-features --examples --bins
}

# start_broker N: starts `kafka-protocol fake --brokers N`, recording frames
# in $CAPTURE; sets BROKER_PID and BOOTSTRAP (every broker).
start_broker() {
    local brokers="$1"
    log "building and starting kafka-protocol fake --brokers $brokers"
    build_binaries
    local target="${CARGO_TARGET_DIR:-target}"
    [[ "$target" = /* ]] || target="$ROOT/$target"
    rm -f "$CAPTURE"
    mkdir -p "$WORK"
    "$target/debug/kafka-protocol" fake --brokers "$brokers" --capture "$CAPTURE" \
        >"$WORK/broker.out" 2>"$WORK/broker.err" &
    BROKER_PID=$!
    for _ in $(seq 300); do
        if grep -q '^bootstrap ' "$WORK/broker.out"; then break; fi
        kill -0 "$BROKER_PID" 2>/dev/null || { cat "$WORK/broker.err"; exit 1; }
        sleep 0.1
    done
    BOOTSTRAP="$(sed -n 's/^bootstrap //p' "$WORK/broker.out")"
    [[ -n "$BOOTSTRAP" ]] || { echo "the fake did not start"; cat "$WORK/broker.err"; exit 1; }
    if [[ "$(wc -l <"$WORK/broker.out")" -ne 1 ]]; then
        echo "FAIL: the fake printed more than its bootstrap line"
        FAILURES+=("broker: stdout is not exactly one line")
    fi
    log "kafka-protocol fake (pid $BROKER_PID) on $BOOTSTRAP"
}

stop_broker() {
    log "stopping the fake with SIGTERM"
    kill -TERM "$BROKER_PID"
    local rc=0
    wait "$BROKER_PID" || rc=$?
    BROKER_PID=""
    if [[ $rc -ne 0 ]]; then
        echo "FAIL: the fake exited with $rc on SIGTERM"
        FAILURES+=("broker: exit status $rc on SIGTERM")
    fi
}

# ---------------------------------------------------------------- proxy
# start_proxy NAME COMMAND...: starts a proxy printing `listening on ADDR`;
# sets PROXY_PID and PROXY_ADDRESS.
start_proxy() {
    local name="$1"
    shift
    "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
    PROXY_PID=$!
    # Up to 30 s: a fresh debug binary can be slow to load on a busy machine.
    for _ in $(seq 300); do
        if grep -q '^listening on ' "$WORK/$name.out"; then break; fi
        kill -0 "$PROXY_PID" 2>/dev/null || { cat "$WORK/$name.err"; exit 1; }
        sleep 0.1
    done
    PROXY_ADDRESS="$(sed -n 's/^listening on //p' "$WORK/$name.out")"
    [[ -n "$PROXY_ADDRESS" ]] || { echo "$name did not start"; cat "$WORK/$name.err"; exit 1; }
    log "$name (pid $PROXY_PID) on $PROXY_ADDRESS, upstream $BOOTSTRAP"
}

stop_proxy() {
    local name="$1"
    kill -TERM "$PROXY_PID"
    local rc=0
    wait "$PROXY_PID" || rc=$?
    PROXY_PID=""
    if [[ $rc -ne 0 ]]; then
        echo "FAIL: $name exited with $rc on SIGTERM"
        FAILURES+=("$name: exit status $rc on SIGTERM")
    fi
}

# ---------------------------------------------------------------- steps
FAILURES=()
PASSED=0

# The command that runs a client: python scripts in the venv, kafkajs in node.
client_command() {
    case "$1" in
        kcat) echo "$VENV/bin/python $CLIENTS/kcat_client.py" ;;
        kafka-python) echo "$VENV/bin/python $CLIENTS/kafka_python_client.py" ;;
        confluent-kafka) echo "$VENV/bin/python $CLIENTS/confluent_client.py" ;;
        kafkajs) echo "node $HERE/kafkajs/client.js" ;;
    esac
}

# step CLIENT STEP CLIENT_PREFIX COMMAND...: runs one bounded step; on failure
# prints which client and step failed, its output and the last frames.
step() {
    local client="$1" name="$2" prefix="$3"
    shift 3
    local out="$WORK/logs/$client-$name.log"
    mkdir -p "$WORK/logs"
    local rc=0
    timeout "$TIMEOUT" "$@" >"$out" 2>&1 &
    STEP_PID=$!
    wait "$STEP_PID" || rc=$?
    STEP_PID=""
    if [[ $rc -eq 0 ]]; then
        PASSED=$((PASSED + 1))
        sed 's/^/   /' "$out" | grep -v '"level":"WARN"' | tail -n 6
        return 0
    fi
    [[ $rc -eq 124 ]] && echo "   (timed out after ${TIMEOUT}s)" >>"$out"
    echo "FAIL: client $client, step $name (exit $rc)"
    sed 's/^/   | /' "$out" | tail -n 30
    echo "   last frames of $prefix*:"
    "$VENV/bin/python" "$CLIENTS/capture.py" tail "$CAPTURE" --client-prefix "$prefix" -n 12 || true
    FAILURES+=("$client: $name")
    return 1
}

# exchange PRODUCER CONSUMER TAG: the producer produces a spec with every
# codec, the consumer consumes it in a group; all checks.
exchange() {
    local producer="$1" consumer="$2" tag="$3"
    local spec="$WORK/spec-$tag.json"
    local pprefix="$tag-$producer-producer" cprefix="$tag-$consumer-consumer"
    log "$tag: $producer produces, $consumer consumes"
    "$VENV/bin/python" "$CLIENTS/spec.py" make --client "$producer" --codecs "$CODECS" \
        --prefix "$tag-$producer" --out "$spec"
    # shellcheck disable=SC2046
    step "$producer" produce "$pprefix" $(client_command "$producer") produce \
        --bootstrap "$BOOTSTRAP" --spec "$spec" --client-id "$pprefix" || return 0
    step "$producer" check-produce-codecs "$pprefix" "$VENV/bin/python" "$CLIENTS/capture.py" \
        check-produce "$CAPTURE" --client-prefix "$pprefix" --spec "$spec" || true
    # shellcheck disable=SC2046
    step "$consumer" consume "$cprefix" $(client_command "$consumer") consume \
        --bootstrap "$BOOTSTRAP" --spec "$spec" --client-id "$cprefix" \
        --group "group-$tag-$consumer" --out "$WORK/consumed-$tag.jsonl" || return 0
    step "$consumer" verify-messages "$cprefix" "$VENV/bin/python" "$CLIENTS/spec.py" \
        verify "$spec" "$WORK/consumed-$tag.jsonl" || true
    step "$consumer" check-group "$cprefix" "$VENV/bin/python" "$CLIENTS/capture.py" \
        check-group "$CAPTURE" --client-prefix "$cprefix" || true
}

# ---------------------------------------------------------------- main
install_clients
if [[ $INSTALL_ONLY -eq 1 ]]; then
    log "clients installed: $VENV, tests/interop/kafkajs/node_modules"
    exit 0
fi
start_broker 1

CLIENT_LIST=(kcat kafka-python confluent-kafka kafkajs)
for client in "${CLIENT_LIST[@]}"; do
    exchange "$client" "$client" "interop-$client"
done
exchange kcat kafkajs cross1
exchange kafka-python confluent-kafka cross2

# Batches written by this crate's RecordBatchBuilder, one per codec, must be
# readable by a real consumer: kcat (librdkafka) consumes and compares them.
builder_batches() {
    local topic="builder-batches" expected="$WORK/builder-expected.tsv"
    local consumed="$WORK/builder-consumed.tsv"
    local target="${CARGO_TARGET_DIR:-target}"
    [[ "$target" = /* ]] || target="$ROOT/$target"
    "$target/debug/examples/produce_batches" "$BOOTSTRAP" "$topic" 3 \
        | awk -F'\t' '{ print $1 "\t" $2 "\tcodec=" $3 }' >"$expected"
    kcat -b "$BOOTSTRAP" -t "$topic" -C -o beginning -e -q -f '%k\t%s\t%h\n' >"$consumed"
    if ! diff -q "$expected" "$consumed" >/dev/null; then
        echo "kcat read something else than the builder wrote:"
        diff "$expected" "$consumed" | head -n 20
        return 1
    fi
    echo "kcat read all $(wc -l <"$expected") builder records, every codec"
}

log "builder batches: produce_batches writes every codec, kcat consumes"
build_binaries
export -f builder_batches
export WORK ROOT BOOTSTRAP
step kcat builder-batches builder bash -c builder_batches || true

log "edge cases: unsupported versions and apis, unknown api key"
step broker edge-cases edge-cases "$VENV/bin/python" "$CLIENTS/edge_cases.py" "$BOOTSTRAP" || true

log "api versions used (from the capture)"
for client in "${CLIENT_LIST[@]}"; do
    echo "-- $client"
    "$VENV/bin/python" "$CLIENTS/capture.py" versions "$CAPTURE" --client-prefix "interop-$client-"
done | tee "$WORK/versions.md"

# Every client again, through `kafka-protocol proxy`.
log "building kafka-protocol (proxy)"
build_binaries
TARGET="${CARGO_TARGET_DIR:-target}"
[[ "$TARGET" = /* ]] || TARGET="$ROOT/$TARGET"
BROKER_ADDRESS="$BOOTSTRAP"
start_proxy proxy "$TARGET/debug/kafka-protocol" proxy --listen 127.0.0.1:0 \
    --upstream "$BROKER_ADDRESS" --log "$WORK/proxy.log"
BOOTSTRAP="$PROXY_ADDRESS"
for client in "${CLIENT_LIST[@]}"; do
    exchange "$client" "$client" "proxy-$client"
done
stop_proxy proxy
BOOTSTRAP="$BROKER_ADDRESS"
log "proxy log: decoded Produce, Fetch and Metadata of every client; no broker port leaked"
PROXY_PREFIXES=()
for client in "${CLIENT_LIST[@]}"; do PROXY_PREFIXES+=(--client-prefix "proxy-$client"); done
step proxy check-log proxy "$VENV/bin/python" "$CLIENTS/proxy_log.py" "$WORK/proxy.log" \
    --broker-port "${BROKER_ADDRESS##*:}" "${PROXY_PREFIXES[@]}" || true

# The example filter: topic names prefixed per tenant, with kcat.
tenant_flow() {
    local topic="orders" expected="$WORK/tenant-expected.txt"
    printf 'one\ntwo\nthree\n' >"$expected"
    kcat -b "$PROXY_ADDRESS" -t "$topic" -P -z lz4 <"$expected"
    kcat -b "$PROXY_ADDRESS" -t "$topic" -C -o beginning -e -q >"$WORK/tenant-via-proxy.txt"
    kcat -b "$BOOTSTRAP" -t "tenant-a.$topic" -C -o beginning -e -q >"$WORK/tenant-direct.txt"
    diff "$expected" "$WORK/tenant-via-proxy.txt" || { echo "through the proxy: wrong records"; return 1; }
    diff "$expected" "$WORK/tenant-direct.txt" || { echo "tenant-a.$topic: wrong records"; return 1; }
    if kcat -b "$PROXY_ADDRESS" -L | grep -q 'tenant-a\.'; then
        echo "the tenant saw a prefixed topic name"; return 1
    fi
    echo "kcat wrote and read $topic through tenant_proxy; the broker holds tenant-a.$topic"
}
start_proxy tenant_proxy "$TARGET/debug/examples/tenant_proxy" --listen 127.0.0.1:0 \
    --upstream "$BOOTSTRAP" --prefix tenant-a.
export -f tenant_flow
export PROXY_ADDRESS
step kcat tenant-proxy tenant bash -c tenant_flow || true
stop_proxy tenant_proxy

stop_broker

if [[ ${#FAILURES[@]} -eq 0 && $UPDATE_FIXTURES -eq 1 ]]; then
    log "refreshing fixtures/clients/"
    for client in "${CLIENT_LIST[@]}"; do
        dir="$ROOT/fixtures/clients/$client"
        mkdir -p "$dir"
        "$VENV/bin/python" "$CLIENTS/capture.py" extract "$CAPTURE" \
            --client-prefix "interop-$client-" --out "$dir/frames.jsonl"
        cp "$WORK/spec-interop-$client.json" "$dir/messages.json"
    done
fi

# Three brokers: leaders and coordinators spread; clients follow Metadata
# and FindCoordinator to the right broker.
CAPTURE="$WORK/capture-3.jsonl"
start_broker 3
for client in "${CLIENT_LIST[@]}"; do
    exchange "$client" "$client" "three-$client"
done
stop_broker

if [[ ${#FAILURES[@]} -ne 0 ]]; then
    echo "interop: failed steps:"
    printf '  %s\n' "${FAILURES[@]}"
fi
echo "interop: $PASSED passed, ${#FAILURES[@]} failed"
[[ ${#FAILURES[@]} -eq 0 ]]
