"""Checks the exchange log of `kafka-protocol proxy --log` after the clients
ran through the proxy.

    proxy_log.py LOG --broker-port N --client-prefix P [--client-prefix P ...]

Every line is one object with exactly the pinned keys, in order. For each
client prefix, the log holds decoded Produce, Fetch and Metadata exchanges
(request and, where one comes, response bodies decoded, not null). No logged
response carries the broker's own port: clients only ever learn the
proxy's address.
"""

import argparse
import json
import sys

KEYS = ["api", "version", "correlationId", "clientId", "request", "response"]
NEEDED = ["Produce", "Fetch", "Metadata"]


def ports(value, found):
    """Collects every "port" value in a JSON body, at any depth."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "port":
                found.append(item)
            ports(item, found)
    elif isinstance(value, list):
        for item in value:
            ports(item, found)
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("log")
    parser.add_argument("--broker-port", type=int, required=True)
    parser.add_argument("--client-prefix", action="append", required=True)
    args = parser.parse_args()
    problems = []
    exchanges = []
    with open(args.log) as f:
        for number, line in enumerate(f, 1):
            entry = json.loads(line)
            if "error" in entry:
                continue  # a connection that ended with an error
            if list(entry) != KEYS:
                problems.append(f"line {number}: keys {list(entry)}, not {KEYS}")
                continue
            exchanges.append(entry)
            if entry["request"] is None:
                problems.append(f"line {number}: {entry['api']} request not decoded")
            leaked = [p for p in ports(entry["response"], []) if p == args.broker_port]
            if leaked:
                problems.append(f"line {number}: {entry['api']} response carries the broker's port")
            if str(args.broker_port) in json.dumps(entry["response"]):
                # Not necessarily an address, but worth a look.
                print(f"note: line {number} mentions {args.broker_port} in its response")
    seen_ports = set()
    for entry in exchanges:
        seen_ports.update(p for p in ports(entry["response"], []) if isinstance(p, int))
    for prefix in args.client_prefix:
        mine = [e for e in exchanges if (e["clientId"] or "").startswith(prefix)]
        for api in NEEDED:
            decoded = [e for e in mine if e["api"] == api and e["request"] is not None
                       and (e["response"] is not None or api == "Produce")]
            if not decoded:
                problems.append(f"{prefix}: no decoded {api} exchange in the log")
        print(f"{prefix}: {len(mine)} exchanges, "
              + ", ".join(f"{api} {sum(e['api'] == api for e in mine)}" for api in NEEDED))
    print(f"ports clients learned: {sorted(seen_ports)} (broker's: {args.broker_port})")
    for problem in problems:
        print("FAIL:", problem)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
