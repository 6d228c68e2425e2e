#!/usr/bin/env bash
# CI smoke run of the fuzz targets: installs cargo-fuzz if it is missing,
# seeds the corpora from the golden fixtures, builds every target and runs
# each for FUZZ_SECONDS (default 30) seconds. Fails on any crash, leak of a
# panic, timeout (10 s per input) or out-of-memory (2 GiB).
#
# Works on stable Rust: `-s none` needs no sanitizer and no -Zbuild-std
# (libfuzzer-sys compiles libFuzzer with the system C++ compiler). `-a` keeps
# debug assertions on, so the decoder's own consistency checks run too (every
# struct-array element that validates must decode, to the same bytes).
#
#   FUZZ_SECONDS=30        seconds per target
#   FUZZ_TARGET_DIR=dir    cargo target directory (default fuzz/target)
#   FUZZ_TARGETS="a b"     targets to run (default: all seven)
set -euo pipefail

CARGO_FUZZ_VERSION=0.13.2
cd "$(dirname "$0")"

if ! cargo fuzz --version 2>/dev/null | grep -qF "$CARGO_FUZZ_VERSION"; then
    cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi

seconds=${FUZZ_SECONDS:-30}
targets=${FUZZ_TARGETS:-"request_frame response_body round_trip record_batch record_stream json capture"}
target_dir=()
if [[ -n ${FUZZ_TARGET_DIR:-} ]]; then
    target_dir=(--target-dir "$FUZZ_TARGET_DIR")
fi

python3 seed-corpus.py
start=$SECONDS
cargo fuzz build -s none -a "${target_dir[@]}"
echo "fuzz: built in $((SECONDS - start)) s"

failed=()
for target in $targets; do
    echo "fuzz: running $target for $seconds s"
    # libFuzzer reports every new input; keep that in a log and show the
    # final statistics, or the whole tail when the target fails.
    log="artifacts/smoke-$target.log"
    mkdir -p artifacts
    if cargo fuzz run "$target" -s none -a "${target_dir[@]}" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        >"$log" 2>&1; then
        grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|Done )' "$log" || true
    else
        tail -n 40 "$log"
        failed+=("$target")
    fi
done

echo "fuzz: total $((SECONDS - start)) s"
if ((${#failed[@]})); then
    echo "fuzz: crashes in: ${failed[*]} (inputs under fuzz/artifacts/)" >&2
    exit 1
fi
echo "fuzz: no crash in: $targets"
