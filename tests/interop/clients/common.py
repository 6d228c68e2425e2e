"""The command line shared by the client scripts:

    <client>.py produce --bootstrap HOST:PORT --spec spec.json --client-id ID
    <client>.py consume --bootstrap HOST:PORT --spec spec.json --client-id ID \
        --group GROUP --out consumed.jsonl
"""

import argparse
import json


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["produce", "consume"])
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--spec", required=True)
    parser.add_argument("--client-id", required=True)
    parser.add_argument("--group")
    parser.add_argument("--out")
    args = parser.parse_args()
    with open(args.spec) as f:
        args.spec = json.load(f)
    if args.command == "consume" and not (args.group and args.out):
        parser.error("consume needs --group and --out")
    return args


def expected_count(spec):
    return sum(len(t["messages"]) for t in spec["topics"])


def topics(spec):
    return [t["topic"] for t in spec["topics"]]


def run(produce, consume):
    """Runs the `produce` or `consume` command named on the command line;
    returns the process exit status."""
    args = parse_args()
    if args.command == "produce":
        produce(args)
        return 0
    return consume(args)
