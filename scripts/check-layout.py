#!/usr/bin/env python3
"""Checks the shape of the code: no function over 80 lines outside tests; no
import circle between the files of one crate (a file imports another when
it names it through `crate::`, `super::`, or, in a mod.rs, a child by name;
the crate root, which only declares and re-exports, is left out); and the
crates' one-way order (docs/ARCHITECTURE.md): each crate depends only on
the project's crates below it, and the model on no runtime at all.
Every run first checks itself on two planted circles (`use super::{…}` and
nested `crate::{x::{…}}`). Prints what breaks a rule and exits 1; exits 0
when all holds.
Usage: scripts/check-layout.py [--architecture] [ROOT]"""
import os, re, subprocess, sys

LIMIT = 80


def long_functions(root):
    found = []
    for dp, _, fn in os.walk(os.path.join(root, "crates")):
        parts = dp.split(os.sep)
        if "tests" in parts or "benches" in parts:
            continue
        for f in fn:
            if f.endswith(".rs"):
                found += file_long_functions(os.path.join(dp, f))
    return found


def strip(line):
    s = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    s = re.sub(r"'(\\.|[^'\\])'", "''", s)
    return s.split("//")[0]


def file_long_functions(path):
    lines = open(path).read().split("\n")
    found = []
    for i, line in enumerate(lines):
        if re.match(r"\s*#\[cfg\(test\)\]", line):
            break
        m = re.match(r"\s*(pub(\([^)]*\))?\s+)?(async\s+)?(const\s+)?(unsafe\s+)?fn\s+(\w+)", line)
        if not m:
            continue
        depth, opened, j = 0, False, i
        while j < len(lines):
            s = strip(lines[j])
            for ch in s:
                if ch == "{":
                    depth += 1
                    opened = True
                elif ch == "}":
                    depth -= 1
            if opened and depth == 0:
                break
            if not opened and s.rstrip().endswith(";"):
                break
            j += 1
        n = j - i + 1
        if opened and n > LIMIT:
            found.append(f"{os.path.relpath(path)}:{i + 1}: fn {m.group(6)} is {n} lines (limit {LIMIT})")
    return found


def module_path(src, path):
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] in ("lib", "main"):
        rel = rel[:-1]
    if rel and rel[-1] == "mod":
        rel = rel[:-1]
    return tuple(rel)


def use_paths(tree):
    """The paths a use-tree names: `a::{b, c::{d, e}}` gives a::b, a::c::d,
    a::c::e (`self` names its parent)."""
    tree = re.sub(r"\s+as\s+\w+", "", tree)
    tree = re.sub(r"\s+", "", tree)
    depth, start, parts = 0, 0, []
    for i, ch in enumerate(tree):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(tree[start:i])
            start = i + 1
    parts.append(tree[start:])
    if len(parts) > 1:
        return [p for part in parts if part for p in use_paths(part)]
    t = parts[0]
    if "{" in t:
        head = t[: t.index("{")].rstrip(":")
        inner = t[t.index("{") + 1 : t.rindex("}")]
        base = [x for x in head.split("::") if x]
        return [base + [x for x in q if x != "self"] for q in use_paths(inner)]
    return [[x for x in t.split("::") if x and x != "self" and x != "*"]]


def reexports(root_text, files):
    """Names the crate root re-exports (`pub use a::b::Thing;`), each
    mapped to the file that defines it, so `crate::Thing` is read as an
    import of that file."""
    names = {}
    for u in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+((?:crate::|self::)?[\w:{}\s,]+);", root_text):
        for q in use_paths(u.group(1)):
            q = [x for x in q if x not in ("crate", "self")]
            if len(q) < 2:
                continue
            for k in range(len(q) - 1, 0, -1):
                if tuple(q[:k]) in files:
                    names[q[-1]] = tuple(q[:k])
                    break
    return names


def references(module, path, text, files, exported=None):
    exported = exported or {}
    refs = []
    # Every use statement, however its braces nest: `use crate::{a::{b, c}, d};`,
    # `use super::{x, y};`, `pub(crate) use self::z::w;`.
    for u in re.finditer(r"\buse\s+((?:crate|super|self)\s*::[^;]*);", text):
        for q in use_paths(u.group(1)):
            if q and q[0] == "crate":
                refs.append(q[1:])
            elif q and q[0] == "super":
                ups = 0
                while ups < len(q) and q[ups] == "super":
                    ups += 1
                refs.append(list(module[: len(module) - ups]) + q[ups:])
            elif q and q[0] == "self":
                refs.append(list(module) + q[1:])
    # Paths in the code itself: `crate::a::b::f()`, `super::x::y`.
    for u in re.finditer(r"crate::((?:\w+::)*)\{([^}]*)\}", text):
        base = [x for x in u.group(1).split("::") if x]
        for item in u.group(2).split(","):
            refs.append(base + [x for x in item.strip().split("::") if x and x != "self"])
    for u in re.finditer(r"crate::(\w+(?:::\w+)*)", text):
        refs.append(u.group(1).split("::"))
    for u in re.finditer(r"(?<!::)super::(\w+(?:::\w+)*)", text):
        refs.append(list(module[:-1]) + u.group(1).split("::"))
    targets = set()
    for r in refs:
        if r and tuple(r[:1]) not in files and r[0] in exported:
            targets.add(exported[r[0]])
            continue
        for k in range(len(r), 0, -1):
            if tuple(r[:k]) in files:
                targets.add(tuple(r[:k]))
                break
    if module:
        for child in files:
            if len(child) == len(module) + 1 and child[: len(module)] == module:
                if re.search(r"(?<![\w:])" + child[-1] + r"::", text):
                    targets.add(child)
    targets.discard(module)
    targets.discard(())
    return targets


def circles(root):
    found = []
    crates = os.path.join(root, "crates")
    for crate in sorted(os.listdir(crates)):
        src = os.path.join(crates, crate, "src")
        if not os.path.isdir(src):
            continue
        files = {}
        for dp, _, fn in os.walk(src):
            for f in fn:
                if f.endswith(".rs"):
                    p = os.path.join(dp, f)
                    files[module_path(src, p)] = p
        exported = {}
        for name in ("lib.rs", "main.rs"):
            if os.path.exists(os.path.join(src, name)):
                exported.update(reexports(open(os.path.join(src, name)).read(), files))
        edges = {}
        for m, p in files.items():
            text = open(p).read().split("#[cfg(test)]")[0]
            # Comments (doc links among them) name files without importing them.
            text = "\n".join(strip(line) for line in text.split("\n"))
            edges[m] = references(m, p, text, files, exported) if m else set()
        for comp in strongly_connected(edges):
            names = sorted(os.path.relpath(files[x], src) for x in comp)
            found.append(f"crates/{crate}: import circle between {', '.join(names)}")
    return found


def strongly_connected(edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    sys.setrecursionlimit(10000)
    for v in list(edges):
        if v not in index:
            visit(v)
    return out


# Each crate's allowed project dependencies (normal, not dev): the order
# pool-types -> model / pool -> targets -> engine / analysis -> tune -> report -> cli.
# The pool stands alone: its own types, not the result model.
ORDER = {
    "pool-types": set(),
    "model": {"pool-types"},
    "pool": {"pool-types"},
    "greeter": set(),
    "targets": {"model", "pool", "greeter"},
    "server": {"model", "greeter", "pool", "targets"},
    "engine": {"model", "pool", "targets"},
    "analysis": {"model"},
    "tune": {"model", "analysis"},
    "report": {"model", "analysis", "tune"},
    "cli": {"model", "pool", "targets", "server", "engine", "analysis", "tune", "report"},
}
# Crates that must stay free of an async runtime (plain data and pure
# functions), checked over their whole dependency tree.
NO_RUNTIME = ["pool-types", "model", "analysis", "tune", "report"]


def normal_dependencies(manifest):
    deps, section = set(), None
    for line in open(manifest):
        line = line.strip()
        if line.startswith("["):
            section = line
            continue
        if section in ("[dependencies]",) or (
            section and section.startswith("[target.") and section.endswith(".dependencies]")
        ):
            m = re.match(r"poolbench-(\w+)(\.workspace)?\s*=", line)
            if m:
                deps.add(m.group(1))
    return deps


def crate_order(root):
    found = []
    for crate, allowed in ORDER.items():
        manifest = os.path.join(root, "crates", crate, "Cargo.toml")
        if not os.path.exists(manifest):
            found.append(f"crates/{crate}: missing")
            continue
        for dep in sorted(normal_dependencies(manifest) - allowed):
            found.append(f"crates/{crate} depends on poolbench-{dep}, against the crates' order")
    # The pool stands alone: a user of the pool compiles neither the
    # result model nor schemars.
    tree = subprocess.run(
        ["cargo", "tree", "-q", "-p", "poolbench-pool", "-e", "normal", "--prefix", "none"],
        cwd=root, capture_output=True, text=True,
    )
    for dep in ("poolbench-model", "schemars"):
        if re.search(rf"^{dep} ", tree.stdout, re.M):
            found.append(f"crates/pool pulls in {dep} (it must stand alone)")
    for crate in NO_RUNTIME:
        tree = subprocess.run(
            ["cargo", "tree", "-q", "-p", f"poolbench-{crate}", "-e", "normal", "--prefix", "none"],
            cwd=root, capture_output=True, text=True,
        )
        if tree.returncode != 0:
            found.append(f"crates/{crate}: cargo tree failed: {tree.stderr.strip()}")
        elif re.search(r"^tokio ", tree.stdout, re.M):
            found.append(f"crates/{crate} pulls in tokio (it must stay runtime-free)")
    return found


def drawn_graph(text):
    """The crate graph docs/ARCHITECTURE.md draws: the edges of its
    mermaid block (`cli --> engine`: cli depends on engine; `pool_types`
    is pool-types) and the table's "depends on" column."""
    block = re.search(r"```mermaid\n(.*?)```", text, re.S)
    edges = set()
    for a, b in re.findall(r"^\s*(\w+)\s*-->\s*(\w+)\s*$", block.group(1) if block else "", re.M):
        edges.add((a.replace("_", "-"), b.replace("_", "-")))
    table = {}
    for crate, deps in re.findall(r"^\| `poolbench[\w-]*` \(`crates/([\w-]+)`\) \|.*\| ([^|]*) \|\s*$", text, re.M):
        deps = deps.strip()
        table[crate] = set() if deps == "none" else {d.strip() for d in deps.split(",")}
    return edges, table


def built_graph(root):
    """The crates' normal dependencies on one another, from cargo metadata."""
    import json
    out = subprocess.run(
        ["cargo", "metadata", "--no-deps", "--format-version", "1", "--locked"],
        cwd=root, capture_output=True, text=True,
    )
    if out.returncode != 0:
        return None, out.stderr.strip()
    names, graph = {}, {}
    packages = json.loads(out.stdout)["packages"]
    for p in packages:
        names[p["name"]] = os.path.basename(os.path.dirname(p["manifest_path"]))
    for p in packages:
        graph[names[p["name"]]] = {
            names[d["name"]] for d in p["dependencies"] if d["kind"] is None and d["name"] in names
        }
    return graph, None


def architecture(root):
    """docs/ARCHITECTURE.md draws the crate graph cargo builds: each edge of
    its drawing and each row of its table, no more and no fewer."""
    text = open(os.path.join(root, "docs", "ARCHITECTURE.md")).read()
    edges, table = drawn_graph(text)
    graph, err = built_graph(root)
    if graph is None:
        return [f"docs/ARCHITECTURE.md: cargo metadata failed: {err}"]
    if not edges or not table:
        return ["docs/ARCHITECTURE.md: no mermaid crate graph or no crate table found"]
    built = {(a, b) for a, deps in graph.items() for b in deps}
    found = []
    for a, b in sorted(built - edges):
        found.append(f"docs/ARCHITECTURE.md: the drawing lacks {a} --> {b} (crates/{a} depends on poolbench-{b})")
    for a, b in sorted(edges - built):
        found.append(f"docs/ARCHITECTURE.md: the drawing shows {a} --> {b}, which crates/{a} does not depend on")
    for crate in sorted(set(graph) | set(table)):
        if crate not in table:
            found.append(f"docs/ARCHITECTURE.md: the table has no row for crates/{crate}")
        elif crate not in graph:
            found.append(f"docs/ARCHITECTURE.md: the table's crates/{crate} is not in the workspace")
        elif table[crate] != graph[crate]:
            want = ", ".join(sorted(graph[crate])) or "none"
            found.append(f"docs/ARCHITECTURE.md: crates/{crate} depends on {want}, the table says otherwise")
    return found


PLANTED = {
    # A child importing its parent through `use super::{…}`.
    "braces/src/lib.rs": "mod a;\n",
    "braces/src/a/mod.rs": "mod b;\nuse b::thing;\npub fn f() { thing() }\n",
    "braces/src/a/b.rs": "use super::{f};\npub fn thing() {}\n",
    # Two files through nested `crate::{x::{…}}` groups.
    "nested/src/lib.rs": "mod x;\nmod y;\n",
    "nested/src/x.rs": "use crate::{y::{g}};\npub fn h() { g() }\n",
    "nested/src/y.rs": "use crate::{x::{self as there}};\npub fn g() { there::h() }\n",
    # Two files through names the crate root re-exports.
    "reexport/src/lib.rs": "mod a;\nmod b;\npub use a::A;\npub use b::{B, C};\n",
    "reexport/src/a.rs": "pub struct A(pub crate::B);\n",
    "reexport/src/b.rs": "use crate::A;\npub struct B;\npub struct C(Option<Box<A>>);\n",
}


def self_test():
    """The circle check finds the two planted circles (so a form of import
    it cannot read does not pass as no circle)."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        for rel, text in PLANTED.items():
            path = os.path.join(tmp, "crates", rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, "w").write(text)
        found = circles(tmp)
    want = [
        "crates/braces: import circle",
        "crates/nested: import circle",
        "crates/reexport: import circle",
    ]
    missed = [w for w in want if not any(f.startswith(w) for f in found)]
    return [f"check-layout.py misses a planted circle: {m}" for m in missed]


def main():
    args = sys.argv[1:]
    only_architecture = "--architecture" in args
    args = [a for a in args if a != "--architecture"]
    root = args[0] if args else os.path.join(os.path.dirname(__file__), "..")
    if only_architecture:
        problems = architecture(root)
    else:
        problems = self_test() + long_functions(root) + circles(root) + crate_order(root)
        problems += architecture(root)
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
