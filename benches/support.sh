# Sourced by benches/captures and benches/fake (not run by itself): what
# both need to measure beside real Kafka.
#   bench_need TOOL...          exits 1 naming the first tool missing
#   bench_build_cli             release kafka-protocol; sets CLI
#   bench_build_kgo DIR         tests/go built offline into DIR; sets KGO
#   bench_build_java            tests/java compiled offline; sets JAVA_CP
#   bench_start_kafka DIR       one Kafka node (tests/kafka/broker.sh, the
#                               pinned release, 1 GiB heap, the JVM's full
#                               JIT), stopped on exit; sets KAFKA_DIR,
#                               KAFKA_BOOTSTRAP, KAFKA_PID
#   bench_timed OUT CMD...      runs CMD under GNU time, stdout to OUT; sets
#                               WALL_S (from date, to the ms) and RSS_MIB
#                               (GNU time's maximum resident set size)
#   bench_median VALUE...       prints the median
#   bench_rss_mib PID           prints the resident memory of PID in MiB
# Expects ROOT (the repository) and WORK (a scratch directory) to be set.

bench_need() {
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null || {
            echo "$(basename "$0"): $tool is needed and missing" >&2
            exit 1
        }
    done
}

bench_build_cli() {
    local target="${CARGO_TARGET_DIR:-$ROOT/target}"
    [[ "$target" = /* ]] || target="$ROOT/$target"
    (cd "$ROOT" && cargo build --release -q -p kafka-wire-cli --bin kafka-protocol)
    CLI="$target/release/kafka-protocol"
}

bench_build_kgo() {
    KGO="$1/kgo-flow"
    (cd "$ROOT/tests/go" && GOPROXY=off GOFLAGS="-mod=readonly -buildvcs=false" \
        go build -o "$KGO" .)
}

bench_build_java() {
    mvn -B -o -q -f "$ROOT/tests/java/pom.xml" compile >&2
    JAVA_CP="$ROOT/tests/java/target/classes:$(cat "$ROOT/tests/java/target/classpath.txt")"
}

KAFKA_DIR=""
bench_stop_kafka() {
    [[ -n "$KAFKA_DIR" ]] && "$ROOT/tests/kafka/broker.sh" stop "$KAFKA_DIR" >/dev/null 2>&1
    KAFKA_DIR=""
}

bench_start_kafka() {
    KAFKA_DIR="$1"
    rm -rf "$KAFKA_DIR"
    "$ROOT/tests/kafka/broker.sh" start "$KAFKA_DIR" --heap 1g --full-jit --owner $$ \
        >"$WORK/kafka.env"
    KAFKA_BOOTSTRAP="$(sed -n 's/^bootstrap=//p' "$WORK/kafka.env")"
    KAFKA_PID="$(cat "$KAFKA_DIR/node-1/pid")"
}

bench_timed() {
    local out="$1" start end
    shift
    start="$(date +%s%N)"
    /usr/bin/time -v -o "$WORK/time.txt" "$@" >"$out"
    end="$(date +%s%N)"
    WALL_S="$(python3 -c 'import sys; print(f"{(int(sys.argv[2]) - int(sys.argv[1])) / 1e9:.3f}")' "$start" "$end")"
    RSS_MIB="$(awk -F': *' '/Maximum resident set size/ { printf "%.1f\n", $2 / 1024 }' "$WORK/time.txt")"
}

bench_median() {
    printf '%s\n' "$@" | sort -g | python3 -c 'import statistics, sys; print(statistics.median(float(l) for l in sys.stdin))'
}

bench_rss_mib() {
    awk '/^VmRSS:/ { printf "%.1f\n", $2 / 1024 }' "/proc/$1/status"
}
