#!/usr/bin/env python3
"""Fails when a public item of a crate has no example in its docs.

Reads the rustdoc JSON of each crate named on the command line (made by
`scripts/check-examples.sh`), walks the public API from the crate root the way a user reaches it
(public modules and re-exports), and lists every type, function, method, constant, trait, trait
method and macro whose docs hold no code block. Struct fields and enum variants are described
by their type's example and are not counted. Trait-implementation methods inherit the trait's
docs, so they are not counted either.

Usage: check-examples.py target/doc/phasers.json [more.json ...]
Exit status 1 lists the items lacking an example; 0 prints how many items were checked.
"""

import json
import sys

# Item kinds a user calls or names, and so expects an example for.
CHECKED_KINDS = {"struct", "enum", "union", "trait", "function", "constant", "static",
                 "type_alias", "macro"}


def kind_of(item):
    return next(iter(item["inner"]))


def has_example(item):
    return "```" in (item.get("docs") or "")


def walk(doc):
    index = doc["index"]
    seen = set()
    checked = []
    missing = []

    def note(item, path):
        checked.append(path)
        if not has_example(item):
            missing.append(path)

    def visit(item_id, prefix):
        item = index.get(str(item_id))
        if item is None or item_id in seen:
            return  # an item of another crate, or one reached twice through re-exports
        seen.add(item_id)
        if item.get("visibility") != "public" and kind_of(item) != "impl":
            return
        kind = kind_of(item)
        inner = item["inner"][kind]
        name = item.get("name") or ""
        path = (f"{prefix}::{name}" if prefix else name) if name else prefix
        if kind == "module":
            for child in inner["items"]:
                visit(child, path)
        elif kind == "use":
            if inner.get("id") is not None and not inner.get("is_glob"):
                visit(inner["id"], prefix)
        elif kind in ("struct", "enum", "union"):
            note(item, path)
            for impl_id in inner.get("impls", []):
                impl = index.get(str(impl_id))
                if impl is None:
                    continue
                body = impl["inner"]["impl"]
                if body.get("trait") is not None or body.get("is_synthetic"):
                    continue
                for method_id in body["items"]:
                    method = index.get(str(method_id))
                    if method is not None and method.get("visibility") == "public":
                        note(method, f"{path}::{method['name']}")
        elif kind == "trait":
            note(item, path)
            for method_id in inner["items"]:
                method = index.get(str(method_id))
                if method is not None:
                    note(method, f"{path}::{method['name']}")
        elif kind in CHECKED_KINDS:
            note(item, path)

    root = index[str(doc["root"])]
    visit(doc["root"], "")
    return checked, missing


def main(paths):
    failed = False
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        checked, missing = walk(doc)
        crate = doc["index"][str(doc["root"])]["name"]
        if missing:
            failed = True
            print(f"{crate}: {len(missing)} of {len(checked)} public items have no example:")
            for item in sorted(missing):
                print(f"  {item}")
        else:
            print(f"{crate}: all {len(checked)} public items have an example")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
