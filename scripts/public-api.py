#!/usr/bin/env python3
"""Lists a crate's public surface from rustdoc's JSON output, one item a line,
each with its signature.

    python3 scripts/public-api.py CRATE [--write] [--twice]

Builds `cargo rustdoc -p CRATE --all-features` with JSON output (a rustdoc
option that is still unstable, hence RUSTC_BOOTSTRAP=1 on stable), walks
the public modules and re-exports from the crate root, and lists each
reachable item by its path: functions with their generics, parameters and
return type; constants and statics with their type; structs, enums and
traits with their generics (a struct's public fields and an enum's
variants on the same line); each public inherent method and associated
constant under its type; a trait with its items in braces, one entry
(what an implementer writes and a caller may call). A line ends with the
features or `cfg` an item needs (`// feature alloc`). Items under
`#[doc(hidden)]` are left out: they are plumbing, not surface.

The listing is checked in as docs/public-api/CRATE.txt; the `doc` stage
fails when the crate's surface differs from it, so a change to the public
surface shows up in review as a change to that file. `--write` rewrites it.
Either way the script prints how many entries there are and how many
items are reachable under more than one path; `--twice` lists those items.
"""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STD_CRATES = {"core", "alloc", "std"}


# ---------------------------------------------------------------------------
# Features and cfgs, from rustdoc's `CfgTrace` attributes

CFG_TOKEN = re.compile(
    r'(All|Any|Not)\(\[?|NameValue \{ name: "([^"]+)", value: (?:Some\("([^"]*)"\)|None)'
    r'|(\]\)|\))|(, )'
)


def cfg_conditions(attr):
    """The conditions of one `#[attr = CfgTrace(...)]`, each as Rust-like
    text (`feature alloc`, `feature a or feature b`), all of which hold."""
    body = attr[attr.index("CfgTrace(") + len("CfgTrace("):]
    body = re.sub(r", span: [^}]*\}", " }", body)
    body = re.sub(r"\], [^\]\)]*\(#\d+\)\)", "])", body)
    stack = [("All", [])]
    for m in CFG_TOKEN.finditer(body):
        op, name, value, close, _ = m.groups()
        if op:
            stack.append((op, []))
        elif name:
            if name == "feature":
                stack[-1][1].append(f"feature {value}")
            elif value is None:
                stack[-1][1].append(name)
            else:
                stack[-1][1].append(f'{name} = "{value}"')
        elif close and len(stack) > 1:
            op, parts = stack.pop()
            if op == "Not":
                text = f"not {parts[0]}" if parts else "not"
            elif len(parts) == 1:
                text = parts[0]
            else:
                text = (" and " if op == "All" else " or ").join(parts)
                if len(stack) > 1:
                    text = f"({text})"
            stack[-1][1].append(text)
    return stack[0][1]


def cfgs(item):
    out = []
    for attr in item.get("attrs", []):
        text = attr.get("other") if isinstance(attr, dict) else None
        if text and "CfgTrace(" in text:
            out.extend(cfg_conditions(text))
    return out


def cfg_comment(conds):
    """The conditions an entry needs, without repeats and without an `or`
    that another condition already implies."""
    conds = list(dict.fromkeys(conds))
    kept = [c for c in conds
            if not (" or " in c and any(o != c and o in c.split(" or ") for o in conds))]
    if not kept:
        return ""
    return "  // " + " and ".join(f"({c})" if " or " in c and len(kept) > 1 else c for c in kept)


# ---------------------------------------------------------------------------
# Types and signatures

class Render:
    def __init__(self, doc):
        self.paths = doc["paths"]
        # The crate's own names: a standard item of the same name (`Result`)
        # keeps its full path, so that the two cannot be mistaken.
        self.local = {v["name"] for v in doc["index"].values()
                      if v.get("crate_id") == 0 and v.get("name")
                      and v.get("visibility") == "public"}

    def path_name(self, p):
        """A path as a reader of the listing knows it: this crate's items and
        the standard library's by their name, other crates' with the crate."""
        written = p["path"]
        info = self.paths.get(str(p.get("id")))
        last = written.split("::")[-1]
        if info is not None and info["crate_id"] != 0:
            krate = info["path"][0]
            if krate not in STD_CRATES:
                last = f"{krate}::{info['path'][-1]}"
            elif last in self.local:
                last = written if "::" in written else "::".join(info["path"])
        return last + self.args(p.get("args"))

    def args(self, args):
        if not args:
            return ""
        if "angle_bracketed" in args:
            ab = args["angle_bracketed"]
            parts = [self.generic_arg(a) for a in ab["args"]]
            for c in ab.get("constraints", []):
                head = c["name"] + self.args(c.get("args"))
                binding = c["binding"]
                if "equality" in binding:
                    term = binding["equality"]
                    val = self.ty(term["type"]) if "type" in term else term["constant"]["expr"]
                    parts.append(f"{head} = {val}")
                else:
                    parts.append(f"{head}: {self.bounds(binding['constraint'])}")
            return f"<{', '.join(parts)}>" if parts else ""
        if "parenthesized" in args:
            pa = args["parenthesized"]
            out = "(" + ", ".join(self.ty(t) for t in pa["inputs"]) + ")"
            if pa.get("output"):
                out += " -> " + self.ty(pa["output"])
            return out
        return "(..)"

    def generic_arg(self, a):
        if a == "infer":
            return "_"
        if "lifetime" in a:
            return a["lifetime"]
        if "type" in a:
            return self.ty(a["type"])
        if "const" in a:
            return a["const"]["expr"]
        return "?"

    def ty(self, t):
        if t is None:
            return "()"
        kind, v = next(iter(t.items()))
        if kind in ("primitive", "generic"):
            return v
        if kind == "resolved_path":
            return self.path_name(v)
        if kind == "borrowed_ref":
            life = f"{v['lifetime']} " if v.get("lifetime") else ""
            mut = "mut " if v["is_mutable"] else ""
            return f"&{life}{mut}{self.ty(v['type'])}"
        if kind == "raw_pointer":
            return f"*{'mut' if v['is_mutable'] else 'const'} {self.ty(v['type'])}"
        if kind == "slice":
            return f"[{self.ty(v)}]"
        if kind == "array":
            return f"[{self.ty(v['type'])}; {v['len']}]"
        if kind == "tuple":
            inner = ", ".join(self.ty(x) for x in v)
            return f"({inner},)" if len(v) == 1 else f"({inner})"
        if kind == "impl_trait":
            return "impl " + self.bounds(v)
        if kind == "dyn_trait":
            parts = [self.poly_trait(p) for p in v["traits"]]
            if v.get("lifetime"):
                parts.append(v["lifetime"])
            return "dyn " + " + ".join(parts)
        if kind == "qualified_path":
            self_ty = self.ty(v["self_type"])
            name = v["name"] + self.args(v.get("args"))
            if v.get("trait") is None:
                return f"{self_ty}::{name}"
            if v["self_type"] == {"generic": "Self"}:
                return f"Self::{name}"
            return f"<{self_ty} as {self.path_name(v['trait'])}>::{name}"
        if kind == "function_pointer":
            return self.header(v["header"]) + "fn" + self.inputs(v["sig"], None) + self.output(v["sig"])
        if kind == "infer":
            return "_"
        return kind

    def poly_trait(self, p):
        hrtb = self.hrtb(p.get("generic_params", []))
        return hrtb + self.path_name(p["trait"])

    def hrtb(self, params):
        if not params:
            return ""
        return "for<" + ", ".join(self.param(p) for p in params) + "> "

    def bound(self, b):
        kind, v = next(iter(b.items()))
        if kind == "trait_bound":
            modifier = {"maybe": "?", "maybe_const": "~const "}.get(v.get("modifier"), "")
            return self.hrtb(v.get("generic_params", [])) + modifier + self.path_name(v["trait"])
        if kind == "outlives":
            return v
        if kind == "use":
            names = [x if isinstance(x, str) else next(iter(x.values())) for x in v]
            return "use<" + ", ".join(names) + ">"
        return kind

    def bounds(self, bs):
        return " + ".join(self.bound(b) for b in bs)

    def param(self, p):
        kind, v = next(iter(p["kind"].items()))
        name = p["name"]
        if kind == "lifetime":
            return name + (": " + " + ".join(v["outlives"]) if v["outlives"] else "")
        if kind == "type":
            out = name + (": " + self.bounds(v["bounds"]) if v["bounds"] else "")
            if v.get("default") is not None:
                out += " = " + self.ty(v["default"])
            return out
        if kind == "const":
            out = f"const {name}: {self.ty(v['type'])}"
            if v.get("default") is not None:
                out += f" = {v['default']}"
            return out
        return name

    def generics(self, g):
        params = [p for p in g["params"]
                  if not (p["kind"].get("type") or {}).get("is_synthetic")]
        return "<" + ", ".join(self.param(p) for p in params) + ">" if params else ""

    def where(self, g):
        preds = []
        for w in g.get("where_predicates", []):
            kind, v = next(iter(w.items()))
            if kind == "bound_predicate":
                preds.append(self.hrtb(v.get("generic_params", [])) + self.ty(v["type"]) + ": "
                             + self.bounds(v["bounds"]))
            elif kind == "lifetime_predicate":
                preds.append(v["lifetime"] + ": " + " + ".join(v["outlives"]))
            elif kind == "eq_predicate":
                rhs = v["rhs"]
                rhs = self.ty(rhs["type"]) if "type" in rhs else rhs["constant"]["expr"]
                preds.append(self.ty(v["lhs"]) + " = " + rhs)
        return " where " + ", ".join(preds) if preds else ""

    @staticmethod
    def header(h):
        out = ""
        if h.get("is_const"):
            out += "const "
        if h.get("is_async"):
            out += "async "
        if h.get("is_unsafe"):
            out += "unsafe "
        abi = h.get("abi")
        if abi not in (None, "Rust"):
            out += f'extern "{abi if isinstance(abi, str) else next(iter(abi))}" '
        return out

    def receiver(self, name, t):
        if name != "self":
            return None
        if t == {"generic": "Self"}:
            return "self"
        if "borrowed_ref" in t and t["borrowed_ref"]["type"] == {"generic": "Self"}:
            v = t["borrowed_ref"]
            life = f"{v['lifetime']} " if v.get("lifetime") else ""
            return f"&{life}{'mut ' if v['is_mutable'] else ''}self"
        return "self: " + self.ty(t)

    def inputs(self, sig, names=True):
        parts = []
        for name, t in sig["inputs"]:
            recv = self.receiver(name, t)
            if recv is not None:
                parts.append(recv)
            elif names is None or name == "_":
                parts.append(self.ty(t))
            else:
                parts.append(f"{name}: {self.ty(t)}")
        if sig.get("is_c_variadic"):
            parts.append("...")
        return "(" + ", ".join(parts) + ")"

    def output(self, sig):
        out = sig.get("output")
        return "" if out is None else " -> " + self.ty(out)

    def function(self, f, dotted, vis="pub "):
        return (vis + self.header(f["header"]) + "fn " + dotted + self.generics(f["generics"])
                + self.inputs(f["sig"]) + self.output(f["sig"]) + self.where(f["generics"]))


# ---------------------------------------------------------------------------
# The walk

class Surface:
    def __init__(self, doc):
        self.doc = doc
        self.index = doc["index"]
        self.r = Render(doc)
        self.entries = {}  # sort key -> line
        self.paths_of = {}  # item id -> set of paths
        self.seen = set()
        self.module_cfgs = {}  # source file -> what its module needs
        self.modules(self.doc["root"], [])

    def modules(self, module_id, conds):
        """Each module's source file and the cfgs of it and its parents, for
        items whose cfg is on the module that holds them (an impl block in
        an optional module, say)."""
        it = self.item(module_id)
        if it is None or "module" not in it["inner"]:
            return
        conds = conds + cfgs(it)
        if it.get("span"):
            self.module_cfgs[it["span"]["filename"]] = conds
        for child in it["inner"]["module"]["items"]:
            self.modules(child, conds)

    def file_cfgs(self, item_id):
        it = self.item(item_id) if isinstance(item_id, int) else None
        if it is None or not it.get("span"):
            return []
        return self.module_cfgs.get(it["span"]["filename"], [])

    def item(self, item_id):
        it = self.index.get(str(item_id))
        return it if it is not None and it.get("crate_id") == 0 else None

    def add(self, key, line, item_id, dotted, conds):
        line += cfg_comment(conds + self.file_cfgs(item_id))
        self.entries[tuple(key)] = line
        self.paths_of.setdefault(item_id, set()).add(dotted)

    def visit(self, item_id, path, key, conds):
        """A child of a module: an item, or a `use` naming one."""
        it = self.index.get(str(item_id))
        if it is None or it.get("crate_id") != 0:
            return
        kind, inner = next(iter(it["inner"].items()))
        if kind != "use":
            self.visit_named(item_id, path + [it["name"]], key, conds)
            return
        conds = conds + cfgs(it)
        target = inner.get("id")
        if target is None:
            return
        if self.item(target) is None:
            info = self.doc["paths"].get(str(target))
            if info is not None and info["crate_id"] != 0 and not inner.get("is_glob"):
                dotted = "::".join(path + [inner["name"]])
                self.add(key + [(0, inner["name"])], f"pub use {dotted} = {inner['source']}",
                         ("use", dotted), dotted, conds)
            return
        if inner.get("is_glob"):
            target_item = self.item(target)
            if target_item is not None and "module" in target_item["inner"]:
                for child in target_item["inner"]["module"]["items"]:
                    if self.public(child):
                        self.visit(child, path, key, conds)
            return
        self.visit_named(target, path + [inner["name"]], key, conds)

    def public(self, item_id):
        it = self.index.get(str(item_id))
        return it is not None and it.get("visibility") == "public"

    def visit_named(self, item_id, path, key, conds):
        it = self.item(item_id)
        if it is None:
            return
        kind, inner = next(iter(it["inner"].items()))
        dotted = "::".join(path)
        if (item_id, dotted) in self.seen:
            return
        self.seen.add((item_id, dotted))
        conds = conds + cfgs(it)
        r = self.r
        name = path[-1]
        if kind == "module":
            here = key + [(1, name)]
            self.add(here, f"pub mod {dotted}", item_id, dotted, conds)
            for child in inner["items"]:
                if self.public(child):
                    self.visit(child, path, here, conds)
            return
        here = key + [(0, name)]
        if kind == "function":
            line = r.function(inner, dotted)
        elif kind == "constant":
            line = f"pub const {dotted}: {r.ty(inner['type'])}"
        elif kind == "static":
            line = f"pub static {'mut ' if inner.get('is_mutable') else ''}{dotted}: {r.ty(inner['type'])}"
        elif kind == "type_alias":
            g = inner["generics"]
            line = f"pub type {dotted}{r.generics(g)}{r.where(g)} = {r.ty(inner['type'])}"
        elif kind == "struct":
            g = inner["generics"]
            line = f"pub struct {dotted}{r.generics(g)}{self.struct_body(inner['kind'])}{r.where(g)}"
        elif kind == "union":
            g = inner["generics"]
            line = f"pub union {dotted}{r.generics(g)}{r.where(g)}"
        elif kind == "enum":
            g = inner["generics"]
            variants = [self.variant(v) for v in inner["variants"]]
            if inner.get("has_stripped_variants"):
                variants.append("..")
            line = f"pub enum {dotted}{r.generics(g)}{r.where(g)} {{ {', '.join(variants)} }}"
        elif kind == "trait":
            g = inner["generics"]
            head = ("unsafe " if inner["is_unsafe"] else "") + ("auto " if inner["is_auto"] else "")
            sup = ": " + r.bounds(inner["bounds"]) if inner["bounds"] else ""
            members = [m for m in (self.trait_member(i, conds + cfgs(it)) for i in inner["items"])
                       if m is not None]
            body = " { " + "; ".join(members) + " }" if members else " {}"
            line = f"pub {head}trait {dotted}{r.generics(g)}{sup}{r.where(g)}{body}"
        elif kind in ("macro", "proc_macro"):
            line = f"pub macro {dotted}!"
        else:
            line = f"{kind} {dotted}"
        if "non_exhaustive" in it.get("attrs", []):
            line = "#[non_exhaustive] " + line
        self.add(here, line, item_id, dotted, conds)
        for impl_id in inner.get("impls", []) if kind in ("struct", "enum", "union") else []:
            impl = self.item(impl_id)
            if impl is None:
                continue
            imp = impl["inner"].get("impl", {})
            if imp.get("trait") is not None or imp.get("is_synthetic") or imp.get("blanket_impl"):
                continue
            for member in imp.get("items", []):
                if self.public(member):
                    self.member(member, dotted, here, conds + cfgs(impl) + self.file_cfgs(impl_id))

    def trait_member(self, member_id, conds):
        """One item of a trait, as it stands in the trait's braces: its
        name without the trait's path, and the cfgs it needs beyond the
        trait's own."""
        it = self.item(member_id)
        if it is None:
            return None
        line = self.member_line(it, it["name"], trait=True)
        extra = [c for c in cfgs(it) if c not in conds]
        return (f"#[cfg({' and '.join(extra)})] " if extra else "") + line

    def member_line(self, it, dotted, trait):
        kind, inner = next(iter(it["inner"].items()))
        vis = "" if trait else "pub "
        r = self.r
        if kind == "function":
            line = r.function(inner, dotted, vis)
            if trait and inner.get("has_body"):
                line += " { .. }"
        elif kind == "assoc_const":
            line = f"{vis}const {dotted}: {r.ty(inner['type'])}"
            if trait and inner.get("value") is not None:
                line += " = .."
        elif kind == "assoc_type":
            g = inner["generics"]
            line = f"type {dotted}{r.generics(g)}"
            if inner.get("bounds"):
                line += ": " + r.bounds(inner["bounds"])
            if inner.get("type") is not None:
                line += " = " + r.ty(inner["type"])
        else:
            line = f"{kind} {dotted}"
        return line

    def member(self, member_id, owner, key, conds):
        """A public inherent method or associated item, a line of its own."""
        it = self.item(member_id)
        if it is None:
            return
        dotted = f"{owner}::{it['name']}"
        line = self.member_line(it, dotted, trait=False)
        self.add(key + [(0, it["name"])], line, member_id, dotted, conds + cfgs(it))

    def struct_body(self, kind):
        if kind == "unit":
            return ";"
        if "tuple" in kind:
            parts = []
            for field in kind["tuple"]:
                f = self.item(field) if field is not None else None
                parts.append("pub " + self.r.ty(f["inner"]["struct_field"]) if f else "_")
            return "(" + ", ".join(parts) + ")"
        plain = kind["plain"]
        fields = [self.item(f) for f in plain["fields"]]
        parts = [f"pub {f['name']}: {self.r.ty(f['inner']['struct_field'])}" for f in fields if f]
        if plain.get("has_stripped_fields"):
            if not parts:
                return ""
            parts.append("..")
        return " { " + ", ".join(parts) + " }" if parts else " {}"

    def variant(self, variant_id):
        it = self.item(variant_id)
        if it is None:
            return "_"
        kind = it["inner"]["variant"]["kind"]
        name = it["name"]
        if kind == "plain":
            return name
        if "tuple" in kind:
            parts = []
            for field in kind["tuple"]:
                f = self.item(field) if field is not None else None
                parts.append(self.r.ty(f["inner"]["struct_field"]) if f else "_")
            return f"{name}({', '.join(parts)})"
        fields = [self.item(f) for f in kind["struct"]["fields"]]
        parts = [f"{f['name']}: {self.r.ty(f['inner']['struct_field'])}" for f in fields if f]
        if kind["struct"].get("has_stripped_fields"):
            parts.append("..")
        return f"{name} {{ {', '.join(parts)} }}"

    def run(self):
        root = self.index[str(self.doc["root"])]
        crate = root["name"]
        for child in root["inner"]["module"]["items"]:
            if self.public(child):
                self.visit(child, [crate], [(1, crate)], [])
        return [self.entries[k] for k in sorted(self.entries)]

    def twice(self):
        """Items reachable under more than one path, each with its paths."""
        return sorted(sorted(paths) for paths in self.paths_of.values() if len(paths) > 1)


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
        surface = Surface(json.load(f))
    listing = surface.run()
    twice = surface.twice()
    counts = (f"{len(listing)} entries, {len(twice)} items under more than one path "
              f"({sum(len(p) for p in twice)} entries)")
    if "--twice" in sys.argv:
        for paths in twice:
            print("  ".join(paths))
    text = "".join(line + "\n" for line in listing)
    path = os.path.join(ROOT, "docs", "public-api", crate + ".txt")
    if "--write" in sys.argv:
        with open(path, "w") as f:
            f.write(text)
        print(f"public-api: {crate}: {counts}, written to docs/public-api/{crate}.txt")
        return 0
    try:
        with open(path) as f:
            old = f.read()
    except FileNotFoundError:
        old = ""
    if old == text:
        print(f"public-api: {crate}: {counts}, as docs/public-api/{crate}.txt lists")
        return 0
    old_lines, new_lines = set(old.splitlines()), set(listing)
    for line in sorted(old_lines - new_lines):
        print(f"- {line}")
    for line in sorted(new_lines - old_lines):
        print(f"+ {line}")
    print(f"public-api: {crate}: {counts}; the surface differs from "
          f"docs/public-api/{crate}.txt (review it, then: "
          f"python3 scripts/public-api.py {crate} --write)", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
