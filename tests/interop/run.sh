#!/usr/bin/env bash
# Installs the clients of the interop suite, whose runs are Rust tests in
# README command 2 (`cargo test --workspace --all-features`):
# tests/tests/fake_interop.rs (kcat, kafka-python, confluent-kafka and
# kafkajs against `kafka-protocol fake --brokers 1` and `--brokers 3` and
# against real Kafka, through the proxy and tenant_proxy) and
# tests/tests/chaos.rs (confluent-kafka under faults).
#
#   bash tests/interop/run.sh --install-only    # what .ci/run calls
#
# Installs, each only when missing or out of date: kcat from Debian
# (apt-get), the pinned PyPI packages of requirements.txt into
# target/interop/venv, the pinned npm packages below into
# tests/interop/kafkajs/node_modules (no lock file is written). The tests
# skip a missing client with a message; KAFKA_WIRE_REQUIRE_INTEROP, which
# .ci/run sets after this, makes that a failure.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
HERE="$ROOT/tests/interop"
VENV="$ROOT/target/interop/venv"
NPM_PACKAGES=(kafkajs@2.2.4 kafkajs-snappy@1.1.0 lz4js@0.2.0 @bokuweb/zstd-wasm@0.0.27 fzstd@0.1.1)

if [[ "${1:-}" != "--install-only" || $# -ne 1 ]]; then
    echo "usage: bash tests/interop/run.sh --install-only" >&2
    echo "(the interop runs are tests: cargo test --workspace --all-features --test fake_interop)" >&2
    exit 2
fi

log() { echo "== $*"; }

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
stamp="$HERE/kafkajs/node_modules/.interop-installed"
if [[ "$(cat "$stamp" 2>/dev/null)" != "${NPM_PACKAGES[*]}" ]]; then
    log "installing kafkajs and its codecs (pinned, no lock file)"
    (cd "$HERE/kafkajs" && npm install --no-package-lock --no-save --no-audit --no-fund \
        "${NPM_PACKAGES[@]}")
    echo "${NPM_PACKAGES[*]}" >"$stamp"
fi
log "clients installed: kcat, $VENV, tests/interop/kafkajs/node_modules"
