#!/usr/bin/env python3
"""Lists a crate's public surface from rustdoc's JSON output, one item a line.

    python3 scripts/public-api.py CRATE [--write]

Builds `cargo rustdoc -p CRATE --all-features` with JSON output (a rustdoc
option that is still unstable, hence RUSTC_BOOTSTRAP=1 on stable), walks
the public modules and re-exports from the crate root, and lists each
reachable item and each public inherent method by its path. Items under
`#[doc(hidden)]` are left out: they are plumbing, not surface.

The listing is checked in as docs/public-api/CRATE.txt; the `doc` stage
fails when the crate's surface differs from it, so a change to the public
surface shows up in review as a change to that file. `--write` rewrites it.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def hidden(item):
    for attr in item.get("attrs", []):
        text = attr if isinstance(attr, str) else json.dumps(attr)
        if "doc(hidden)" in text.replace(" ", "") or '"hidden"' in text:
            return True
    return False


def surface(doc):
    index = doc["index"]
    lines = set()
    seen = set()

    def item_kind(item):
        return next(iter(item["inner"].keys()))

    def visit(item_id, path):
        item = index.get(str(item_id))
        if item is None or item.get("crate_id") != 0 or hidden(item):
            return
        kind = item_kind(item)
        inner = item["inner"][kind]
        if kind == "use":
            target = inner.get("id")
            name = inner.get("name")
            if target is None:
                return
            if inner.get("is_glob"):
                visit(target, path)
            else:
                visit_named(target, path + [name])
            return
        visit_named(item_id, path + [item["name"]])

    def visit_named(item_id, path):
        item = index.get(str(item_id))
        if item is None or item.get("crate_id") != 0 or hidden(item):
            return
        kind = item_kind(item)
        inner = item["inner"][kind]
        key = (item_id, tuple(path))
        if key in seen:
            return
        seen.add(key)
        dotted = "::".join(path)
        if kind == "module":
            lines.add(f"mod {dotted}")
            for child in inner["items"]:
                child_item = index.get(str(child))
                if child_item is not None and child_item.get("visibility") == "public":
                    visit(child, path)
            return
        lines.add(f"{kind} {dotted}")
        for impl_id in inner.get("impls", []) if isinstance(inner, dict) else []:
            impl = index.get(str(impl_id))
            if impl is None or hidden(impl):
                continue
            imp = impl["inner"].get("impl", {})
            if imp.get("trait") is not None or imp.get("is_synthetic") or imp.get("blanket_impl"):
                continue
            for method_id in imp.get("items", []):
                method = index.get(str(method_id))
                if method is None or method.get("visibility") != "public" or hidden(method):
                    continue
                mkind = item_kind(method)
                lines.add(f"{mkind} {dotted}::{method['name']}")

    root = index[str(doc["root"])]
    crate = root["name"]
    for child in root["inner"]["module"]["items"]:
        child_item = index.get(str(child))
        if child_item is not None and child_item.get("visibility") == "public":
            visit(child, [crate])
    return sorted(lines)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    crate = args[0]
    env = dict(os.environ, RUSTC_BOOTSTRAP="1")
    target = env.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    subprocess.run(
        ["cargo", "rustdoc", "-q", "-p", crate, "--all-features", "--",
         "-Z", "unstable-options", "--output-format", "json"],
        cwd=ROOT, env=env, check=True)
    with open(os.path.join(target, "doc", crate.replace("-", "_") + ".json")) as f:
        listing = surface(json.load(f))
    text = "".join(line + "\n" for line in listing)
    path = os.path.join(ROOT, "docs", "public-api", crate + ".txt")
    if "--write" in sys.argv:
        with open(path, "w") as f:
            f.write(text)
        print(f"public-api: {crate}: {len(listing)} items written to docs/public-api/{crate}.txt")
        return 0
    try:
        with open(path) as f:
            old = f.read()
    except FileNotFoundError:
        old = ""
    if old == text:
        print(f"public-api: {crate}: {len(listing)} items, as docs/public-api/{crate}.txt lists")
        return 0
    old_lines, new_lines = set(old.splitlines()), set(listing)
    for line in sorted(old_lines - new_lines):
        print(f"- {line}")
    for line in sorted(new_lines - old_lines):
        print(f"+ {line}")
    print(f"public-api: {crate}: the surface differs from docs/public-api/{crate}.txt "
          f"(review it, then: python3 scripts/public-api.py {crate} --write)", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
