#!/usr/bin/env python3
"""Writes messages/ from a folder of Kafka schema files, keeping only their facts.

usage: tools/derive_messages.py KAFKA_SCHEMA_DIR OUT_DIR [--abouts-from OUR_DIR]

Kafka's schema files carry the facts of the wire protocol (names, types, versions,
tags, defaults and flags) mixed with prose: `about` texts and `//` comments. This
project keeps the facts and drops the prose, so that every sentence in messages/
is its own. The output is plain JSON, two-space indented, in the key order of the
input, so that a later hand edit (for example an `about` text of our own) shows
up as a small diff.

With --abouts-from, each place (message, field, common struct; see
tools/abouts.py) that OUR_DIR's file of the same name also has keeps our about
text there, so that an upgrade to a new Kafka release starts from the project's
own words; the places left without one are listed, to be written by hand
(tools/abouts.py apply).

The reading of schema files and the places that take an about come from
tools/schema_files.py, which tools/abouts.py imports too.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from schema_files import load, places, with_about  # noqa: E402


def drop_prose(node):
    if isinstance(node, dict):
        return {k: drop_prose(v) for k, v in node.items() if k != "about"}
    if isinstance(node, list):
        return [drop_prose(v) for v in node]
    return node


def keep_abouts(schema, ours_path):
    """Sets our about texts on `schema`; returns the places left without one."""
    ours = dict(places(load(ours_path))) if os.path.exists(ours_path) else {}
    missing = []
    for path, node in places(schema):
        text = ours.get(path, {}).get("about")
        if text:
            with_about(node, text, path == "")
        else:
            missing.append(path or "(message)")
    return missing


def main():
    args = sys.argv[1:]
    ours = None
    if "--abouts-from" in args:
        at = args.index("--abouts-from")
        ours = args[at + 1]
        del args[at : at + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    src, dst = args
    os.makedirs(dst, exist_ok=True)
    for name in sorted(os.listdir(src)):
        if not name.endswith(".json"):
            continue
        schema = drop_prose(load(os.path.join(src, name)))
        if ours is not None:
            for path in keep_abouts(schema, os.path.join(ours, name)):
                print(f"{name}: {path}: no about")
        with open(os.path.join(dst, name), "w", encoding="utf-8") as f:
            json.dump(schema, f, indent=2, ensure_ascii=False)
            f.write("\n")


if __name__ == "__main__":
    main()
