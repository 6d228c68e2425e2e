#!/usr/bin/env bash
# Packs kafka-wire for npm: writes into OUTDIR the main package's tarball
# (kafka-wire-VERSION.tgz, from kafka-wire/) and this platform's
# (kafka-wire-PLATFORM-VERSION.tgz: the package @kafka-wire/PLATFORM, the
# `kafka-protocol` binary in bin/, with the `os` and `cpu` that npm matches),
# and prints their paths, main package first.
#
#   bash kafka-protocol/npm/pack.sh OUTDIR
#
# The binary is KAFKA_WIRE_BINARY when set (a build of another target, or
# one already made); otherwise `cargo build --release -p kafka-wire-cli`
# builds it (or finds it up to date) in the workspace's target/.
# PLATFORM is node's `${process.platform}-${process.arch}` (linux-x64,
# darwin-arm64, win32-x64, ...) unless KAFKA_WIRE_PLATFORM names another,
# for a binary cross-built for it (docs/packages.md).
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: bash kafka-protocol/npm/pack.sh OUTDIR" >&2
    exit 2
fi
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
mkdir -p "$1"
OUT="$(cd "$1" && pwd)"

platform="${KAFKA_WIRE_PLATFORM:-$(node -p 'process.platform + "-" + process.arch')}"
os="${platform%-*}"
cpu="${platform##*-}"
exe=kafka-protocol
[[ $os == win32 ]] && exe=kafka-protocol.exe
version="$(node -p 'require(process.argv[1]).version' "$HERE/kafka-wire/package.json")"
if ! node -e '
    const main = require(process.argv[1]);
    process.exit(main.optionalDependencies["@kafka-wire/" + process.argv[2]] === main.version ? 0 : 1);
' "$HERE/kafka-wire/package.json" "$platform"; then
    echo "pack.sh: kafka-wire/package.json has no optional dependency @kafka-wire/$platform@$version" >&2
    exit 1
fi

binary="${KAFKA_WIRE_BINARY:-}"
if [[ -z $binary ]]; then
    (cd "$ROOT" && cargo build --release -q -p kafka-wire-cli --bin kafka-protocol)
    target_dir="$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps |
        node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).target_directory))')"
    binary="$target_dir/release/$exe"
fi
[[ -f $binary ]] || { echo "pack.sh: $binary is missing" >&2; exit 1; }

stage="$(mktemp -d "$OUT/.stage.XXXXXX")"
trap 'rm -rf "$stage"' EXIT

# The main package, as it is in the repository.
cp -R "$HERE/kafka-wire" "$stage/main"

# This platform's package.
mkdir -p "$stage/platform/bin"
cp "$binary" "$stage/platform/bin/$exe"
chmod 755 "$stage/platform/bin/$exe"
libc=""
[[ $os == linux ]] && libc='"libc": ["glibc"],'
cat >"$stage/platform/package.json" <<JSON
{
  "name": "@kafka-wire/$platform",
  "version": "$version",
  "description": "The kafka-protocol binary of kafka-wire for $platform",
  "license": "Apache-2.0",
  "os": ["$os"],
  "cpu": ["$cpu"],
  $libc
  "files": ["bin"],
  "preferUnplugged": true
}
JSON
cat >"$stage/platform/README.md" <<MD
# @kafka-wire/$platform

The \`kafka-protocol\` binary of the kafka-wire package for $platform.
Install \`kafka-wire\`, which depends on this package (and on one for each
other platform) as an optional dependency; npm installs the one that
matches the machine.
MD

(cd "$stage/main" && npm pack --silent --pack-destination "$OUT" >/dev/null)
(cd "$stage/platform" && npm pack --silent --pack-destination "$OUT" >/dev/null)
echo "$OUT/kafka-wire-$version.tgz"
echo "$OUT/kafka-wire-$platform-$version.tgz"
