"""Kafka's schema files as this project's tools read and write them.

Shared by tools/derive_messages.py and tools/abouts.py, which both import
it and not each other: reading a schema file (JSON with `//` comments and
trailing commas), the places in a schema that take an `about` text, and
setting one in the project's key order.
"""
import json
import re


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


def load(path):
    """The schema file at `path`, parsed, with its comments dropped."""
    with open(path, encoding="utf-8") as f:
        return json.loads(strip_comments(f.read()))


def places(schema):
    """Yields (path, node) for every node that takes an about."""
    yield "", schema

    def walk(fields, prefix):
        for field in fields or []:
            path = f"{prefix}{field['name']}"
            yield path, field
            yield from walk(field.get("fields"), path + "/")

    yield from walk(schema.get("fields"), "")
    for common in schema.get("commonStructs") or []:
        path = f"common:{common['name']}"
        yield path, common
        yield from walk(common.get("fields"), path + "/")


def with_about(node, text, is_message):
    """The node with its about set, keys in the project's order."""
    items = [(k, v) for k, v in node.items() if k != "about"]
    if is_message:
        at = next((i + 1 for i, (k, _) in enumerate(items) if k == "name"), len(items))
        items.insert(at, ("about", text))
    else:
        items.append(("about", text))
    node.clear()
    node.update(items)
