#!/usr/bin/env python3
"""Lists, sets and checks the project's own `about` texts in messages/.

usage:
  tools/abouts.py dump FILE [REF_FILE]   every place that takes an about, as JSON:
                                         path -> {type, versions, ours[, reference]}
  tools/abouts.py apply FILE MAP.json    sets the abouts MAP.json gives (path -> text)
  tools/abouts.py check DIR [REF_DIR]    lists places without an about and, given
                                         Kafka's schemas, texts too close to theirs

Paths: "" is the message itself, "Topics/Partitions/PreVote" a field (nested
under the fields that declare its struct), "common:Name" a common struct and
"common:Name/Field" a field of one. A REF_FILE or REF_DIR is only read for
meaning: its texts are never written anywhere.

The files are plain JSON, two-space indented; `about` goes last in a field and
right after `name` in a message, as in the rest of messages/.
"""
import difflib
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
from schema_files import load, places, with_about  # noqa: E402

# A text this close to Kafka's (difflib ratio on normalised words) is a copy.
TOO_CLOSE = 0.75


def dump(path, ref_path=None):
    ref = dict(places(load(ref_path))) if ref_path else {}
    out = {}
    for p, node in places(load(path)):
        entry = {
            "type": node.get("type", "message" if p == "" else "struct"),
            "versions": node.get("versions", node.get("validVersions")),
            "ours": node.get("about"),
        }
        if p in ref and ref[p].get("about"):
            entry["reference"] = ref[p]["about"]
        out[p] = entry
    json.dump(out, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def apply(path, map_path):
    schema = load(path)
    wanted = load(map_path)
    found = dict(places(schema))
    unknown = sorted(set(wanted) - set(found))
    if unknown:
        sys.exit(f"{path}: no such place: {', '.join(unknown)}")
    for p, text in wanted.items():
        if not isinstance(text, str) or not text.strip():
            sys.exit(f"{path}: {p!r}: an about must be a non-empty string")
        with_about(found[p], text.strip(), p == "")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(schema, f, indent=2, ensure_ascii=False)
        f.write("\n")


def words(text):
    return re.findall(r"[a-z0-9]+", text.lower())


def check(directory, ref_dir=None):
    missing = close = 0
    for folder, _, names in sorted(os.walk(directory)):
        for name in sorted(n for n in names if n.endswith(".json")):
            path = os.path.join(folder, name)
            ours = dict(places(load(path)))
            ref = {}
            if ref_dir:
                for sub in ("", "message", "metadata"):
                    candidate = os.path.join(ref_dir, sub, name)
                    if os.path.exists(candidate):
                        ref = dict(places(load(candidate)))
                        break
            for p, node in ours.items():
                text = node.get("about")
                if not text:
                    print(f"{path}: {p or '(message)'}: no about")
                    missing += 1
                    continue
                theirs = ref.get(p, {}).get("about")
                if theirs and len(words(theirs)) >= 4:
                    ratio = difflib.SequenceMatcher(None, words(text), words(theirs)).ratio()
                    if ratio >= TOO_CLOSE:
                        print(f"{path}: {p or '(message)'}: {ratio:.2f} close to Kafka's text")
                        close += 1
    print(f"{missing} places without an about, {close} too close to Kafka's texts")
    sys.exit(1 if missing or close else 0)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    command, rest = sys.argv[1], sys.argv[2:]
    if command == "dump":
        dump(*rest[:2])
    elif command == "apply" and len(rest) == 2:
        apply(*rest)
    elif command == "check":
        check(*rest[:2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
