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
"""
import json
import os
import re
import sys


def strip_comments(text):
    """Removes // comments outside strings and trailing commas before ] or }."""
    out, i, in_str = [], 0, False
    while i < len(text):
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\":
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif text.startswith("//", i):
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(c)
        i += 1
    return re.sub(r",(\s*[\]}])", r"\1", "".join(out))


def drop_prose(node):
    if isinstance(node, dict):
        return {k: drop_prose(v) for k, v in node.items() if k != "about"}
    if isinstance(node, list):
        return [drop_prose(v) for v in node]
    return node


def keep_abouts(schema, ours_path):
    """Sets our about texts on `schema`; returns the places left without one."""
    from abouts import load, places, with_about  # noqa: E402 (imports this module)

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
        with open(os.path.join(src, name), encoding="utf-8") as f:
            schema = drop_prose(json.loads(strip_comments(f.read())))
        if ours is not None:
            for path in keep_abouts(schema, os.path.join(ours, name)):
                print(f"{name}: {path}: no about")
        with open(os.path.join(dst, name), "w", encoding="utf-8") as f:
            json.dump(schema, f, indent=2, ensure_ascii=False)
            f.write("\n")


if __name__ == "__main__":
    main()
