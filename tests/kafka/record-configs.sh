#!/usr/bin/env bash
# tests/kafka/record-configs.sh: records the configs Kafka describes for a
# fresh topic, a fresh broker and a group, into the table the fake cluster
# answers DescribeConfigs from (kafka-protocol/fake/src/config_table/kafka.json).
#
#   bash tests/kafka/record-configs.sh [OUT]
#
# Starts one Kafka node (tests/kafka/broker.sh, the pinned release), creates
# a topic with no configs, and asks DescribeConfigs v4, with synonyms, for
# that topic, for the broker, for the cluster-wide
# broker defaults (resource name "") and for a group that has never
# existed. Writes, in Kafka's own order, one line per config:
#   topic and group: the name, value, source, read-only flag, type,
#     sensitivity and synonyms (name, value, source), as Kafka answered
#     them (facts only: Kafka's documentation of each config is its prose,
#     which the project does not copy);
#   broker: the same, with the value and source replaced by the value
#     Kafka falls back to (its DEFAULT_CONFIG synonym, or null) and the
#     cluster-wide dynamic default a fresh cluster holds (or null). What
#     broker.sh itself sets (listeners, node.id, log.dirs, ...) is no fact
#     about Kafka and is left out; the fake describes its own settings.
#
# Needs the kafka-protocol binary ($KAFKA_PROTOCOL, else target/release,
# else target/debug) and python3.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT=${1:-$ROOT/kafka-protocol/fake/src/config_table/kafka.json}
BIN=${KAFKA_PROTOCOL:-}
if [[ -z $BIN ]]; then
    for BIN in "$ROOT/target/release/kafka-protocol" "$ROOT/target/debug/kafka-protocol"; do
        [[ -x $BIN ]] && break
    done
fi
[[ -x $BIN ]] || { echo "error: no kafka-protocol binary (cargo build -p kafka-wire-cli)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/record-configs.XXXXXX")
trap 'bash "$ROOT/tests/kafka/broker.sh" stop "$work/kafka"; rm -rf "$work"' EXIT
bash "$ROOT/tests/kafka/broker.sh" start "$work/kafka" --owner $$ >"$work/env"
bootstrap=$(sed -n 's/^bootstrap=//p' "$work/env")
version=$(sed -n 's/^version=//p' "$work/env")

"$BIN" request --bootstrap "$bootstrap" --api CreateTopics --version 7 >"$work/created.json" <<'EOF'
{"topics":[{"name":"fresh","numPartitions":1,"replicationFactor":1,"assignments":[],"configs":[]}],
 "timeoutMs":30000,"validateOnly":false}
EOF
"$BIN" request --bootstrap "$bootstrap" --api DescribeConfigs --version 4 >"$work/described.json" <<'EOF'
{"resources":[{"resourceType":2,"resourceName":"fresh","configurationKeys":null},
              {"resourceType":4,"resourceName":"1","configurationKeys":null},
              {"resourceType":4,"resourceName":"","configurationKeys":null},
              {"resourceType":32,"resourceName":"never-seen","configurationKeys":null}],
 "includeSynonyms":true}
EOF

python3 - "$work/created.json" "$work/described.json" "$OUT" "$version" <<'EOF'
import json, sys

created, described, out, version = sys.argv[1:]
assert json.load(open(created))["topics"][0]["errorCode"] == 0, "the topic was not created"
results = json.load(open(described))["results"]
for r in results:
    assert r["errorCode"] == 0, r
topic, broker, cluster, group = (r["configs"] for r in results)
DEFAULT, DYNAMIC_DEFAULT = 5, 3

def as_described(c):
    return {
        "name": c["name"], "value": c["value"], "source": c["configSource"],
        "readOnly": c["readOnly"], "type": c["configType"], "sensitive": c["isSensitive"],
        "synonyms": [[s["name"], s["value"], s["source"]] for s in c["synonyms"]],
    }

def falls_back(c):
    at = lambda source: next((s["value"] for s in c["synonyms"] if s["source"] == source), None)
    return {
        "name": c["name"], "default": at(DEFAULT), "clusterDefault": at(DYNAMIC_DEFAULT),
        "readOnly": c["readOnly"], "type": c["configType"], "sensitive": c["isSensitive"],
    }

cluster_defaults = {c["name"]: c["value"] for c in cluster}
brokers = [falls_back(c) for c in broker]
assert {b["name"]: b["clusterDefault"] for b in brokers if b["clusterDefault"] is not None} == cluster_defaults

with open(out, "w") as f:
    f.write('{"kafka": %s,\n' % json.dumps(version))
    for i, (kind, entries) in enumerate([
        ("topic", [as_described(c) for c in topic]),
        ("broker", brokers),
        ("group", [as_described(c) for c in group]),
    ]):
        f.write(' "%s": [\n' % kind)
        f.write(",\n".join("  " + json.dumps(e, ensure_ascii=False) for e in entries))
        f.write("\n ]%s\n" % ("," if i < 2 else ""))
    f.write("}\n")
print(f"recorded {len(topic)} topic, {len(brokers)} broker and {len(group)} group configs of Kafka {version} in {out}")
EOF
