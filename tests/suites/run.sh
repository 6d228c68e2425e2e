#!/usr/bin/env bash
# tests/suites/run.sh: an outside client's own test suite, as published, run
# against real Kafka or the fake cluster with the same settings apart from
# the bootstrap address.
#
#   run.sh SUITE TARGET [OPTIONS]   TARGET is `kafka` (Kafka 4.4.0 through
#                                   tests/kafka/broker.sh) or `fake`
#                                   (`kafka-protocol fake`)
#   run.sh SUITE kafka --record [OPTIONS]
#                                   as `kafka`, then records the tests that
#                                   passed in tests/suites/SUITE/kafka.tsv,
#                                   with the date and Kafka's version: the
#                                   list README command 2 holds the fake to
#   run.sh SUITE --install-only     fetches and builds what SUITE needs
#                                   (online; .ci/run calls it), runs nothing
#
# Each suite lives in tests/suites/SUITE/ with a `suite.sh` that does the
# work: `suite.sh install`, or `suite.sh run TARGET [OPTIONS]` with the
# outcome file's path in SUITE_TSV. An outcome file has one line per test,
# `NAME<TAB>passed|failed|skipped<TAB>WHY` (WHY may be empty). A suite whose
# install step has not run exits 77 before running anything.
#
# Writes target/suites/SUITE-TARGET[-OPTIONS].tsv (or $SUITE_TSV when set)
# and prints one line:
#   SUITE on TARGET: P passed, F failed, S skipped
# Exit status: the suite script's (0 when it ran, whatever its tests did).
#
# Options are the suite's own; `--brokers N` is common to them.
#
# Environment: KAFKA_PROTOCOL, the `kafka-protocol` binary for `fake` (default:
# target/release/kafka-protocol, then target/debug/kafka-protocol).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"

usage() {
    echo "usage: run.sh SUITE kafka|fake [OPTIONS] | run.sh SUITE --install-only" >&2
    exit 2
}

[[ $# -ge 2 ]] || usage
suite=$1 target=$2
shift 2
script="$ROOT/tests/suites/$suite/suite.sh"
[[ -f $script ]] || { echo "error: no suite $suite (no $script)" >&2; exit 2; }

if [[ $target == --install-only ]]; then
    exec bash "$script" install
fi
[[ $target == kafka || $target == fake ]] || usage
record=0
if [[ ${1:-} == --record ]]; then
    [[ $target == kafka ]] || usage
    record=1
    shift
fi

suffix=$(printf '%s' "$*" | tr -c 'A-Za-z0-9=' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
mkdir -p "$ROOT/target/suites"
tsv="${SUITE_TSV:-$ROOT/target/suites/$suite-$target${suffix:+-$suffix}.tsv}"
rm -f "$tsv"
status=0
SUITE_TSV="$tsv" bash "$script" run "$target" "$@" || status=$?
if [[ -f $tsv ]]; then
    awk -F'\t' -v name="$suite on $target" '
        $2 == "passed" { p++ } $2 == "failed" { f++ } $2 == "skipped" { s++ }
        END { printf "%s: %d passed, %d failed, %d skipped\n", name, p, f, s }' "$tsv"
fi
if ((record)); then
    [[ $status == 0 && -f $tsv ]] || { echo "error: $suite did not run against kafka: nothing recorded" >&2; exit 1; }
    version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$ROOT/tests/java/pom.xml" | head -n 1)
    recorded="$ROOT/tests/suites/$suite/kafka.tsv"
    {
        printf '# %s tests that passed against Kafka %s, recorded %s by tests/suites/run.sh %s kafka --record%s\n' \
            "$suite" "$version" "$(date -u +%Y-%m-%d)" "$suite" "${*:+ $*}"
        awk -F'\t' '$2 == "passed" { print $1 }' "$tsv" | LC_ALL=C sort
    } >"$recorded.tmp"
    mv "$recorded.tmp" "$recorded"
    echo "recorded $(grep -vc '^#' "$recorded") tests in ${recorded#"$ROOT"/}"
fi
exit "$status"
