# tests/suites/crates.sh: what the suites of Rust crates share, sourced by
# their suite.sh (rskafka, rust-rdkafka). Needs ROOT (the workspace root).
#
#   unpack_crate NAME VERSION DIR   has cargo fetch crate NAME at exactly
#                                   VERSION and unpacks it, as published,
#                                   into DIR/NAME-VERSION (online)
#   libtest_outcomes <LOG           the `cargo test` log's test lines as
#                                   NAME<TAB>passed|failed|skipped<TAB>WHY,
#                                   NAME prefixed by its test target
#                                   (`client::test_sasl`, `lib::...`,
#                                   `doc::...`); a failure's WHY is the
#                                   first line of its panic message
#   start_fake OUT BROKERS [OPTION...]
#                                   starts `kafka-protocol fake` ($KAFKA_PROTOCOL,
#                                   else the workspace's release build, else
#                                   its debug build) with its output in
#                                   OUT.out/OUT.err and its pid in OUT.pid;
#                                   prints its bootstrap addresses once it
#                                   listens
#   stop_fakes DIR                  stops every fake whose pid file is in DIR
#
# Sourcing it also drops what an outer cargo sets for the test that runs
# the suite (OUT_DIR, CARGO_MANIFEST_DIR, CARGO_PKG_*, ...): the suite's
# own build and tests would take them for theirs (j4rs, which rskafka's
# Java interop uses, reads OUT_DIR as "running in a build script").

unpack_crate() {
    local name=$1 version=$2 dir=$3 fetch packed
    [[ -f $dir/$name-$version/Cargo.toml ]] && return 0
    mkdir -p "$dir"
    # A throwaway package that depends on the crate, to have cargo fetch it;
    # the crate is then unpacked from cargo's cache, unmodified.
    fetch="$dir/fetch"
    mkdir -p "$fetch/src"
    printf '[package]\nname = "fetch-%s"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\n%s = "=%s"\n\n[workspace]\n' \
        "$name" "$name" "$version" >"$fetch/Cargo.toml"
    : >"$fetch/src/lib.rs"
    cargo fetch --quiet --manifest-path "$fetch/Cargo.toml"
    packed=$(ls "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/"$name-$version.crate" | head -n 1)
    tar -xzf "$packed" -C "$dir"
    rm -rf "$fetch"
}

libtest_outcomes() {
    awk '
        /^ *Running / {
            target = $2
            if (target ~ /^unittests/) target = "lib"
            else { sub(/^tests\//, "", target); sub(/\.rs$/, "", target) }
            next
        }
        /^ *Doc-tests / { target = "doc"; next }
        /^---- .* stdout ----$/ { failing = $2; next }
        failing != "" && /panicked at/ { getline why; if (!(failing in reason)) reason[failing] = why; failing = ""; next }
        /^test .* \.\.\. (ok|FAILED|ignored)/ {
            line = $0
            sub(/^test /, "", line)
            name = line; sub(/ \.\.\. .*$/, "", name)
            outcome = line; sub(/^.* \.\.\. /, "", outcome)
            if (outcome ~ /^ok/) status = "passed"
            else if (outcome ~ /^FAILED/) status = "failed"
            else status = "skipped"
            n++; names[n] = name; targets[n] = target; statuses[n] = status
        }
        END {
            for (i = 1; i <= n; i++) {
                why = ""
                if (statuses[i] == "skipped") why = "ignored by the suite"
                if (statuses[i] == "failed" && (names[i] in reason)) why = reason[names[i]]
                gsub(/\t/, " ", why)
                printf "%s::%s\t%s\t%s\n", targets[i], names[i], statuses[i], why
            }
        }'
}

start_fake() {
    local out=$1 brokers=$2 bin=${KAFKA_PROTOCOL:-} i
    shift 2
    if [[ -z $bin ]]; then
        for bin in "$ROOT/target/release/kafka-protocol" "$ROOT/target/debug/kafka-protocol"; do
            [[ -x $bin ]] && break
        done
    fi
    [[ -x $bin ]] || { echo "error: no kafka-protocol binary (cargo build -p kafka-wire-cli)" >&2; return 1; }
    "$bin" fake --brokers "$brokers" "$@" >"$out.out" 2>"$out.err" &
    echo $! >"$out.pid"
    for ((i = 0; i < 200; i++)); do
        grep -qs '^bootstrap ' "$out.out" && break
        kill -0 "$(cat "$out.pid")" 2>/dev/null || break
        sleep 0.05
    done
    sed -n 's/^bootstrap //p' "$out.out"
}

stop_fakes() {
    local file pid
    for file in "$1"/*.pid; do
        [[ -f $file ]] || continue
        pid=$(cat "$file")
        kill "$pid" 2>/dev/null || true
        while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
        rm -f "$file"
    done
}

unset OUT_DIR CARGO_MANIFEST_DIR CARGO_MANIFEST_PATH CARGO_CRATE_NAME CARGO_PRIMARY_PACKAGE \
    CARGO_TARGET_TMPDIR CARGO_BIN_NAME CARGO_MANIFEST_LINKS
while read -r name; do unset "$name"; done < <(compgen -e | grep '^CARGO_PKG_' || true)
