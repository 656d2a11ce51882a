#!/usr/bin/env python3
"""Fails when a module of a crate imports a module that imports it back (issue 19).

Reads each crate `src` folder named on the command line (by default every crates/*/src of the
workspace), builds the graph of which file imports which, and lists every circle: between files,
and between the crate's top-level rooms (barrier, phaser, wait, error, ...). A folder with both a
lib.rs and a main.rs holds two crates, the library and the binary, and both module trees are
checked, each on its own.

What counts as an import of file A by file B:
- a `use crate::...`, `use super::...`, `use self::...` or `use child::...` in B that names
  something A defines;
- a path written in B's code: `crate::a::Item`, `super::Item`, `self::x::Item`, `child::Item`, or
  `alias::Item` after `use crate::a as alias`;
- an item reached through re-exports (`pub use child::Item` in a mod.rs or lib.rs) counts as an
  import of the file that defines the item, so a mod.rs that is only a facade is no false hub;
- a re-export (`pub use`, `pub(crate) use`) and a `mod child;` are not imports of the file that
  writes them, unless that file uses the re-exported name in its own code;
- code under `#[cfg(test)]` or `#[test]`, comments (doc comments included) and string literals do
  not count: tests may import anything.

A module is one file (foo.rs or foo/mod.rs); inline modules (`mod sealed { ... }`) belong to their
file. Files are found by following `mod name;` from lib.rs and from main.rs, so src/bin and
test-only modules are never read.

Usage:
  check-module-cycles.py [SRC_DIR ...]   check these crate src folders (default: every crate's)
  check-module-cycles.py --self-test     check the checker on small crates it writes itself
Exit status 1 when a circle is found (each is printed as a chain of files); 0 otherwise.
"""

import os
import sys
import tempfile
from collections import deque

# The crate roots a src folder may hold; each one present is a crate of its own.
ROOT_FILES = ("lib.rs", "main.rs")

# How many of the imports between two rooms a room circle lists.
ROOM_EXAMPLES = 4

HINT = ("hint: move what both need below both (into a module that neither imports back), "
        "or let only one side import the other")

# ---------------------------------------------------------------------------------------------
# Tokens


class Token:
    __slots__ = ("kind", "text", "line")

    def __init__(self, kind, text, line):
        self.kind = kind  # "id", "str", "num", "life", "punct"
        self.text = text
        self.line = line

    def __repr__(self):
        return f"{self.kind}:{self.text}@{self.line}"


def _is_ident_start(c):
    return c.isalpha() or c == "_"


def _is_ident_char(c):
    return c.isalnum() or c == "_"


def tokenize(text):
    """Rust tokens without comments; string and char literals become one "str" token each."""
    tokens = []
    i, n, line = 0, len(text), 1

    def skip_quoted(start, quote):
        """Index just past the closing quote of a literal opened at `start`; counts newlines."""
        nonlocal line
        j = start
        while j < n:
            c = text[j]
            if c == "\\":
                if j + 1 < n and text[j + 1] == "\n":
                    line += 1
                j += 2
                continue
            if c == "\n":
                line += 1
            if c == quote:
                return j + 1
            j += 1
        return n

    def skip_raw(start):
        """`start` is at the `r`: r#"..."#, with any number of hashes."""
        nonlocal line
        j = start + 1
        hashes = 0
        while j < n and text[j] == "#":
            hashes += 1
            j += 1
        j += 1  # the opening quote
        close = '"' + "#" * hashes
        end = text.find(close, j)
        end = n if end < 0 else end + len(close)
        line += text.count("\n", j, end)
        return end

    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    if text[j] == "\n":
                        line += 1
                    j += 1
            i = j
        elif c == '"':
            start_line = line
            i = skip_quoted(i + 1, '"')
            tokens.append(Token("str", "", start_line))
        elif c == "'":
            # A char literal ('a', '\n', '\u{1F600}') or a lifetime / label ('a, 'static).
            if i + 1 < n and text[i + 1] == "\\":
                i = skip_quoted(i + 2, "'")
                tokens.append(Token("str", "", line))
            elif i + 2 < n and text[i + 2] == "'":
                i += 3
                tokens.append(Token("str", "", line))
            else:
                j = i + 1
                while j < n and _is_ident_char(text[j]):
                    j += 1
                tokens.append(Token("life", text[i:j], line))
                i = j
        elif _is_ident_start(c):
            j = i
            while j < n and _is_ident_char(text[j]):
                j += 1
            word = text[i:j]
            rest = text[j:j + 2]
            if word in ("r", "br", "cr") and (rest.startswith('"') or rest == '#"' or
                                              rest == "##"):
                start_line = line
                i = skip_raw(j - 1)
                tokens.append(Token("str", "", start_line))
            elif word in ("b", "c") and rest.startswith('"'):
                start_line = line
                i = skip_quoted(j + 1, '"')
                tokens.append(Token("str", "", start_line))
            elif word == "b" and rest.startswith("'"):
                i = skip_quoted(j + 1, "'")
                tokens.append(Token("str", "", line))
            elif word == "r" and rest.startswith("#") and j + 1 < n and \
                    _is_ident_start(text[j + 1]):
                k = j + 1  # a raw identifier: r#type
                while k < n and _is_ident_char(text[k]):
                    k += 1
                tokens.append(Token("id", text[j + 1:k], line))
                i = k
            else:
                tokens.append(Token("id", word, line))
                i = j
        elif c.isdigit():
            j = i
            while j < n and _is_ident_char(text[j]):
                j += 1
            if j + 1 < n and text[j] == "." and text[j + 1].isdigit():
                j += 1
                while j < n and _is_ident_char(text[j]):
                    j += 1
            tokens.append(Token("num", text[i:j], line))
            i = j
        elif c == "$" and i + 1 < n and _is_ident_start(text[i + 1]):
            j = i + 1
            while j < n and _is_ident_char(text[j]):
                j += 1
            tokens.append(Token("id", text[i:j], line))
            i = j
        elif text.startswith("::", i):
            tokens.append(Token("punct", "::", line))
            i += 2
        else:
            tokens.append(Token("punct", c, line))
            i += 1
    return tokens


# ---------------------------------------------------------------------------------------------
# Dropping what only tests compile

OPEN = {"(": ")", "[": "]", "{": "}"}
CLOSE = {")", "]", "}"}
# Items that end at their `;` even when a `{` comes first (a use tree, a struct expression).
SEMI_ITEMS = {"use", "static", "type", "let"}
ITEM_WORDS = {"fn", "struct", "enum", "union", "trait", "impl", "mod", "use", "type", "const",
              "static", "macro_rules", "extern", "let"}


def matching(tokens, i):
    """Index of the bracket closing the one at `i`."""
    depth = 0
    for j in range(i, len(tokens)):
        t = tokens[j]
        if t.kind == "punct":
            if t.text in OPEN:
                depth += 1
            elif t.text in CLOSE:
                depth -= 1
                if depth == 0:
                    return j
    return len(tokens) - 1


def cfg_value(tokens):
    """Three-valued cfg predicate with `test` and `doctest` off: False, True or None (unknown)."""
    pos = 0

    def parse():
        nonlocal pos
        t = tokens[pos]
        pos += 1
        if t.kind != "id":
            return None
        if pos < len(tokens) and tokens[pos].text == "(" and t.text in ("all", "any", "not"):
            end = matching(tokens, pos)
            pos += 1
            values = []
            while pos < end:
                values.append(parse())
                if pos < end and tokens[pos].text == ",":
                    pos += 1
            pos = end + 1
            if t.text == "not":
                v = values[0] if values else None
                return None if v is None else not v
            if t.text == "all":
                if any(v is False for v in values):
                    return False
                return True if all(v is True for v in values) else None
            if any(v is True for v in values):
                return True
            return False if all(v is False for v in values) else None
        if pos < len(tokens) and tokens[pos].text == "=":
            pos += 2  # key = "value"
            return None
        if t.text in ("test", "doctest"):
            return False
        return None

    if not tokens:
        return None
    return parse()


def attribute_is_test_only(attr):
    """`attr` holds the tokens inside `#[...]`."""
    if len(attr) == 1 and attr[0].text == "test":
        return True
    if len(attr) >= 3 and attr[0].text == "cfg" and attr[1].text == "(":
        end = matching(attr, 1)
        return cfg_value(attr[2:end]) is False
    return False


def item_end(tokens, i):
    """Index of the last token of the item (or field, or statement) starting at `i`."""
    j = i
    # Skip visibility and qualifiers to find what kind of item this is.
    while j < len(tokens):
        t = tokens[j]
        if t.text == "pub" and j + 1 < len(tokens) and tokens[j + 1].text == "(":
            j = matching(tokens, j + 1) + 1
        elif t.text in ("pub", "unsafe", "async", "default", "auto") or t.kind == "str":
            j += 1
        elif t.text == "const" and j + 1 < len(tokens) and \
                tokens[j + 1].text in ("fn", "unsafe", "async", "extern"):
            j += 1
        else:
            break
    word = tokens[j].text if j < len(tokens) else ""
    semi_only = word in SEMI_ITEMS or word == "const"
    is_item = word in ITEM_WORDS
    depth = 0
    for k in range(i, len(tokens)):
        t = tokens[k]
        if t.kind != "punct":
            continue
        if t.text in OPEN:
            depth += 1
        elif t.text in CLOSE:
            if depth == 0:
                return k - 1  # closed the enclosing block: the item ended before it
            depth -= 1
            if depth == 0 and t.text == "}" and is_item and not semi_only:
                return k
        elif depth == 0 and (t.text == ";" or (t.text == "," and not is_item)):
            return k
    return len(tokens) - 1


def drop_test_code(tokens):
    """The tokens without attributes, and without the items that only tests compile."""
    out = []
    i, n = 0, len(tokens)
    while i < n:
        t = tokens[i]
        if t.text == "#" and t.kind == "punct" and i + 1 < n:
            inner = tokens[i + 1].text == "!"
            open_at = i + 2 if inner else i + 1
            if open_at < n and tokens[open_at].text == "[":
                close = matching(tokens, open_at)
                attr = tokens[open_at + 1:close]
                if inner:
                    if attribute_is_test_only(attr) and not out:
                        return []  # #![cfg(test)] at the top: the whole file is for tests
                    i = close + 1
                    continue
                test_only = attribute_is_test_only(attr)
                j = close + 1
                # Further outer attributes of the same item.
                while j + 1 < n and tokens[j].text == "#" and tokens[j + 1].text == "[":
                    close = matching(tokens, j + 1)
                    test_only = test_only or attribute_is_test_only(tokens[j + 2:close])
                    j = close + 1
                if test_only:
                    i = item_end(tokens, j) + 1
                else:
                    i = j
                continue
        out.append(t)
        i += 1
    return out


# ---------------------------------------------------------------------------------------------
# Modules


class Module:
    def __init__(self, name, file, parent, inline=False):
        self.name = name
        self.file = file  # the File holding it
        self.parent = parent
        self.inline = inline
        self.children = {}  # name -> Module
        self.bindings = {}  # name -> Binding (its top-level `use`s)
        self.globs = []  # Binding with glob=True
        self.defs = set()  # names of the items it defines

    def path(self):
        parts = []
        m = self
        while m.parent is not None:
            parts.append(m.name)
            m = m.parent
        return list(reversed(parts))


class Binding:
    __slots__ = ("module", "segs", "alias", "glob", "visible", "line")

    def __init__(self, module, segs, alias, glob, visible, line):
        self.module = module
        self.segs = segs
        self.alias = alias
        self.glob = glob
        self.visible = visible
        self.line = line


class File:
    def __init__(self, crate, path, module):
        self.crate = crate
        self.path = path
        self.module = module
        self.tokens = []
        self.uses = []  # (Module where written, Binding)
        self.inline_paths = []  # (Module, segs, line)
        self.names_used = set()  # identifiers outside `use` items

    def rel(self):
        return os.path.relpath(self.path, self.crate.src)

    def room(self):
        parts = self.module.path()
        return parts[0] if parts else os.path.splitext(self.crate.root_name)[0]


def parse_use_tree(tokens, i, prefix, out):
    """Parses one use tree at `i`; appends (segments, alias, glob) to `out`; returns the end."""
    segs = list(prefix)
    while i < len(tokens):
        t = tokens[i]
        if t.text == "::":
            i += 1
        elif t.text == "{":
            i += 1
            while i < len(tokens) and tokens[i].text != "}":
                i = parse_use_tree(tokens, i, segs, out)
                if i < len(tokens) and tokens[i].text == ",":
                    i += 1
            return i + 1
        elif t.text == "*":
            out.append((segs, None, True))
            return i + 1
        elif t.kind == "id":
            segs = segs + [t.text]
            i += 1
            if i < len(tokens) and tokens[i].text == "::":
                i += 1
                continue
            alias = None
            if i + 1 < len(tokens) and tokens[i].text == "as":
                alias = tokens[i + 1].text
                i += 2
            if segs[-1] == "self":
                segs = segs[:-1]
            if alias is None:
                alias = segs[-1] if segs else None
            if alias is not None and alias != "_":
                out.append((segs, alias, False))
            elif alias == "_" and segs:
                out.append((segs, None, False))
            return i
        else:
            return i + 1
    return i


def child_file(parent_file, inline_names, name):
    """Where `mod name;` finds its file, or None."""
    base = os.path.dirname(parent_file.path)
    stem = os.path.basename(parent_file.path)
    if stem not in ("lib.rs", "main.rs", "mod.rs"):
        base = os.path.join(base, stem[:-3])
    base = os.path.join(base, *inline_names)
    for candidate in (os.path.join(base, name + ".rs"), os.path.join(base, name, "mod.rs")):
        if os.path.isfile(candidate):
            return candidate
    return None


def root_files(src):
    """The crate roots in `src`: lib.rs and main.rs, each one that exists."""
    return [name for name in ROOT_FILES if os.path.isfile(os.path.join(src, name))]


class Crate:
    def __init__(self, src, root_name=None):
        self.src = src
        self.files = []
        self.root = None
        self.missing = []  # `mod x;` without a file
        if root_name is None:
            found = root_files(src)
            if not found:
                raise SystemExit(f"check-module-cycles: no lib.rs or main.rs in {src}")
            root_name = found[0]
        # Named in the report only where the folder holds two crates.
        self.root_name = root_name
        self.root = Module("crate", None, None)
        self._read(os.path.join(src, root_name), self.root)

    def _read(self, path, module):
        file = File(self, path, module)
        module.file = file
        self.files.append(file)
        with open(path, encoding="utf-8") as f:
            file.tokens = drop_test_code(tokenize(f.read()))
        self._scan(file)

    def _scan(self, file):
        tokens = file.tokens
        stack = [(file.module, 0, [])]  # (module, brace depth of its body, inline names)
        depth = 0
        i, n = 0, len(tokens)
        while i < n:
            t = tokens[i]
            module, body_depth, inline_names = stack[-1]
            at_top = depth == body_depth
            if t.kind == "punct":
                if t.text == "{":
                    depth += 1
                elif t.text == "}":
                    depth -= 1
                    if len(stack) > 1 and depth == stack[-1][1] - 1:
                        stack.pop()
                i += 1
                continue
            if t.kind != "id":
                i += 1
                continue
            prev = tokens[i - 1].text if i > 0 else ""
            if t.text == "mod" and i + 1 < n and tokens[i + 1].kind == "id" and prev != "::":
                name = tokens[i + 1].text
                after = tokens[i + 2].text if i + 2 < n else ""
                if after == ";":
                    path = child_file(file, inline_names, name)
                    if path is None:
                        self.missing.append(f"{file.rel()}: mod {name};")
                    else:
                        child = Module(name, None, module)
                        module.children[name] = child
                        self._read(path, child)
                    i += 3
                    continue
                if after == "{":
                    child = module.children.get(name)
                    if child is None:
                        child = Module(name, file, module, inline=True)
                        module.children[name] = child
                    depth += 1
                    stack.append((child, depth, inline_names + [name]))
                    i += 3
                    continue
            if t.text == "use" and prev != "::":
                visible = self._visible_before(tokens, i)
                out = []
                end = parse_use_tree(tokens, i + 1, [], out)
                for segs, alias, glob in out:
                    if not segs:
                        continue
                    b = Binding(module, segs, alias, glob, visible, t.line)
                    file.uses.append((module, b))
                    if at_top:
                        if glob:
                            module.globs.append(b)
                        elif alias:
                            module.bindings[alias] = b
                while end < n and tokens[end].text != ";":
                    end += 1
                i = end + 1
                continue
            if at_top and t.text in ("struct", "enum", "union", "trait", "type", "fn", "const",
                                     "static") and i + 1 < n and tokens[i + 1].kind == "id":
                module.defs.add(tokens[i + 1].text)
            if at_top and t.text == "macro_rules" and i + 2 < n and tokens[i + 1].text == "!":
                module.defs.add(tokens[i + 2].text)
            file.names_used.add(t.text)
            # A path written in code: crate::.., super::.., self::.., child::.., alias::..
            if i + 1 < n and tokens[i + 1].text == "::" and prev != "::" and \
                    not (prev == "in" and i >= 2 and tokens[i - 2].text == "("):
                segs = [t.text]
                j = i + 1
                while j + 1 < n and tokens[j].text == "::" and tokens[j + 1].kind == "id":
                    segs.append(tokens[j + 1].text)
                    j += 2
                file.inline_paths.append((module, segs, t.line))
                for s in segs[1:]:
                    file.names_used.add(s)
                i = j
                continue
            i += 1

    @staticmethod
    def _visible_before(tokens, i):
        j = i - 1
        if j >= 0 and tokens[j].text == ")":
            depth = 0
            while j >= 0:
                if tokens[j].text == ")":
                    depth += 1
                elif tokens[j].text == "(":
                    depth -= 1
                    if depth == 0:
                        break
                j -= 1
            j -= 1
        return j >= 0 and tokens[j].text == "pub"


# ---------------------------------------------------------------------------------------------
# Resolving a path to the file that defines what it names


class Target:
    """What a path names: a module, an item of `file`, or nothing of this crate (None)."""

    def __init__(self, file=None, module=None):
        self.file = file
        self.module = module


def start_of(module, segs, seen):
    """Turns a path written in `module` into (module, remaining segments), or None if external."""
    first = segs[0]
    if first in ("crate", "$crate"):
        m = module
        while m.parent is not None:
            m = m.parent
        return m, segs[1:]
    if first == "self":
        return module, segs[1:]
    if first == "super":
        m = module
        k = 0
        while k < len(segs) and segs[k] == "super":
            if m.parent is None:
                return None
            m = m.parent
            k += 1
        return m, segs[k:]
    if first in module.children:
        return module, segs
    b = module.bindings.get(first)
    if b is not None and (b.segs[0] != first or b.module is not module):
        key = (id(module), tuple(segs))
        if key in seen:
            return None
        seen.add(key)
        target = resolve_binding(b, segs[1:], seen)
        if target is None:
            return None
        return target
    if first in module.defs:
        return module, segs
    for g in module.globs:
        gm = glob_module(g, seen)
        if gm is not None and provides(gm, first, set()):
            return gm, segs
    return None


def resolve_binding(b, rest, seen):
    start = start_of(b.module, b.segs, seen)
    if start is None:
        # Re-exports something from outside the crate: the file that re-exports it is the target.
        return ("file", b.module.file)
    if start[0] == "file":
        return start
    m, segs = start
    return m, segs + rest


def glob_module(g, seen):
    # A glob's own path is looked up among its module's names, and so among its globs, itself
    # included: `use plotters::prelude::*` asks whether some glob of the module provides
    # `plotters`, which asks where this glob leads again. Rust never resolves a glob through
    # itself; without this guard the lookup recursed until Python gave up.
    key = ("glob", id(g))
    if key in seen:
        return None
    seen = set(seen)
    seen.add(key)
    start = start_of(g.module, g.segs, seen)
    if start is None or isinstance(start[0], str):
        return None
    t = walk(start[0], start[1], set(seen))
    return t.module if t is not None else None


def provides(module, name, seen):
    if id(module) in seen:
        return False
    seen.add(id(module))
    if name in module.children or name in module.bindings or name in module.defs:
        return True
    return any(gm is not None and provides(gm, name, seen)
               for gm in (glob_module(g, set()) for g in module.globs))


def walk(module, segs, seen):
    m = module
    for k, seg in enumerate(segs):
        if seg == "self":
            continue
        if seg == "super":
            if m.parent is None:
                return None
            m = m.parent
            continue
        if seg in m.children:
            m = m.children[seg]
            continue
        b = m.bindings.get(seg)
        if b is not None:
            key = (id(m), seg)
            if key in seen:
                return Target(file=m.file)
            seen.add(key)
            nxt = resolve_binding(b, segs[k + 1:], seen)
            if nxt[0] == "file":
                return Target(file=nxt[1])
            return walk(nxt[0], nxt[1], seen)
        if seg not in m.defs:
            for g in m.globs:
                gm = glob_module(g, seen)
                if gm is not None and provides(gm, seg, set()):
                    return walk(gm, segs[k:], seen)
        return Target(file=m.file)
    return Target(file=m.file, module=m)


def resolve(module, segs):
    seen = set()
    start = start_of(module, segs, seen)
    if start is None:
        return None
    if start[0] == "file":
        return Target(file=start[1])
    return walk(start[0], start[1], seen)


# ---------------------------------------------------------------------------------------------
# The graph


class Graph:
    def __init__(self, crates):
        self.crates = crates
        self.edges = {}  # File -> {File: [evidence, ...]}
        for crate in crates:
            for f in crate.files:
                self.edges.setdefault(f, {})
                self._edges_of(f)

    def _add(self, a, b, evidence):
        if b is None or a is b:
            return
        self.edges[a].setdefault(b, []).append(evidence)

    def _edges_of(self, f):
        for module, b in f.uses:
            if b.glob:
                gm = glob_module(b, set())
                if gm is None:
                    t = resolve(module, b.segs)  # `use Enum::*`: the enum's file
                    if t is not None and t.module is None:
                        self._add(f, t.file, (b.line, "use " + "::".join(b.segs) + "::*"))
                    continue
                for name in sorted(f.names_used):
                    if provides(gm, name, set()):
                        t = walk(gm, [name], set())
                        if t is not None and t.module is None:
                            self._add(f, t.file, (b.line, "use " + "::".join(b.segs) + "::*"))
                continue
            t = resolve(module, b.segs)
            if t is None or t.module is not None:
                continue  # outside the crate, or a module: its uses in code make the edges
            if b.visible and b.alias not in f.names_used:
                continue  # a re-export the file itself does not use
            self._add(f, t.file, (b.line, "use " + "::".join(b.segs)))
        for module, segs, line in f.inline_paths:
            first = segs[0]
            if first in ("crate", "$crate", "super", "self") or first in module.children:
                pass
            elif first in module.bindings:
                t = resolve(module, [first])
                if t is None or t.module is None:
                    continue  # an item: its `use` made the edge already
            else:
                continue
            t = resolve(module, segs)
            if t is not None:
                self._add(f, t.file, (line, "::".join(segs)))

    def edge_count(self):
        return sum(len(v) for v in self.edges.values())


def strongly_connected(nodes, succ):
    """Tarjan's algorithm, iterative; components of more than one node."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(succ(root)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(succ(w))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w is v:
                        break
                if len(comp) > 1:
                    out.append(comp)
    return out


def circles_in(component, succ, key):
    """One shortest circle through each edge of the component, without repeats."""
    members = set(component)
    found = {}
    for u in sorted(component, key=key):
        for v in sorted((w for w in succ(u) if w in members), key=key):
            # Shortest path v -> ... -> u inside the component.
            prev = {v: None}
            queue = deque([v])
            while queue and u not in prev:
                x = queue.popleft()
                for y in sorted((w for w in succ(x) if w in members), key=key):
                    if y not in prev:
                        prev[y] = x
                        queue.append(y)
            if u not in prev:
                continue
            path = []
            x = u
            while x is not None:
                path.append(x)
                x = prev[x]
            cycle = [u] + list(reversed(path))[:-1]  # u -> v -> ... (back to u)
            names = [key(c) for c in cycle]
            start = names.index(min(names))
            canon = tuple(cycle[start:] + cycle[:start])
            found.setdefault(tuple(key(c) for c in canon), list(canon))
    return [found[k] for k in sorted(found, key=lambda k: (len(k), k))]


def report(crates, out):
    """Prints the circles; returns (files read, edges, file circles, room circles)."""
    graph = Graph(crates)
    n_file, n_room = 0, 0
    for crate in crates:
        files = crate.files
        succ = lambda f: [g for g in graph.edges[f] if g.crate is crate]  # noqa: E731
        shown = min(os.path.relpath(crate.src), os.path.abspath(crate.src), key=len)
        if len(root_files(crate.src)) > 1:
            shown += f" ({crate.root_name})"
        for missing in crate.missing:
            print(f"{shown}: warning: no file for {missing}", file=out)
        for comp in sorted(strongly_connected(files, succ),
                           key=lambda c: sorted(f.rel() for f in c)):
            circles = circles_in(comp, succ, File.rel)
            n_file += len(circles)
            print(f"\n{shown}: {len(comp)} files import one another "
                  f"({len(circles)} circle{'s' if len(circles) != 1 else ''}):", file=out)
            for c in circles:
                print("  circle: " + " -> ".join(f.rel() for f in c + [c[0]]), file=out)
            print("  the imports that close them:", file=out)
            members = set(comp)
            for a in sorted(comp, key=File.rel):
                for b in sorted((g for g in graph.edges[a] if g in members), key=File.rel):
                    line, what = graph.edges[a][b][0]
                    more = len(graph.edges[a][b]) - 1
                    extra = f" (+{more} more)" if more else ""
                    print(f"    {a.rel()}:{line}: {what}   [-> {b.rel()}]{extra}", file=out)
            print("  " + HINT, file=out)

        # Rooms: the crate's top-level modules.
        room_edges = {}
        for a in files:
            for b, evidence in graph.edges[a].items():
                if b.crate is crate and a.room() != b.room():
                    room_edges.setdefault(a.room(), {}).setdefault(b.room(), []).append(
                        (a, b, evidence))
        rooms = sorted({f.room() for f in files})
        rsucc = lambda r: sorted(room_edges.get(r, {}))  # noqa: E731
        for comp in sorted(strongly_connected(rooms, rsucc), key=sorted):
            circles = circles_in(comp, rsucc, lambda r: r)
            n_room += len(circles)
            print(f"\n{shown}: rooms {', '.join(sorted(comp))} import one another "
                  f"({len(circles)} circle{'s' if len(circles) != 1 else ''}):", file=out)
            for c in circles:
                print("  room circle: " + " -> ".join(c + [c[0]]), file=out)
            print("  the imports between them:", file=out)
            members = set(comp)
            for ra in sorted(comp):
                for rb in sorted(r for r in room_edges.get(ra, {}) if r in members):
                    imports = sorted(room_edges[ra][rb], key=lambda e: (e[0].rel(), e[1].rel()))
                    print(f"    {ra} -> {rb}: {len(imports)} "
                          f"import{'s' if len(imports) != 1 else ''}", file=out)
                    for a, b, evidence in imports[:ROOM_EXAMPLES]:
                        line, what = evidence[0]
                        print(f"      {a.rel()}:{line}: {what}   [-> {b.rel()}]", file=out)
                    if len(imports) > ROOM_EXAMPLES:
                        print(f"      ... and {len(imports) - ROOM_EXAMPLES} more", file=out)
            print("  " + HINT, file=out)
    n_files = sum(len(c.files) for c in crates)
    return graph, n_files, graph.edge_count(), n_file, n_room


def check(src_dirs, out=sys.stdout):
    crates = []
    for src in src_dirs:
        if not os.path.isdir(src):
            print(f"check-module-cycles: no such folder: {src}", file=out)
            return 2
        roots = root_files(src)
        if not roots:
            print(f"check-module-cycles: no lib.rs or main.rs in {src}", file=out)
            return 2
        crates.extend(Crate(src, root) for root in roots)
    _, n_files, n_edges, n_file, n_room = report(crates, out)
    verdict = "FAILED" if n_file or n_room else "ok"
    print(f"\ncheck-module-cycles: {verdict}: {n_files} files read in {len(crates)} "
          f"crate{'s' if len(crates) != 1 else ''}, {n_edges} imports between files, "
          f"{n_file} file circle{'s' if n_file != 1 else ''}, "
          f"{n_room} room circle{'s' if n_room != 1 else ''}", file=out)
    return 1 if n_file or n_room else 0


# ---------------------------------------------------------------------------------------------
# --self-test

# A crate without a circle, full of things that look like imports but are not, and of imports
# that must be followed through facades.
CLEAN = {
    "lib.rs": '''
//! The docs name `crate::b::Beta` and `crate::tools::x::X`: a doc comment is no import.
pub mod a;
pub mod b;
mod low;
pub mod tools;
mod drawing;
pub use a::Alpha;
pub use b::Beta;
#[cfg(doctest)]
struct Readme;
''',
    "a/mod.rs": '''
//! A facade: it only declares and re-exports.
mod inner;
pub use inner::Alpha;
''',
    "a/inner.rs": '''
use crate::low::Shared;
/// Returns `crate::b::Beta`... in a doc comment only.
pub struct Alpha(Shared);
fn raw() -> &'static str { r#"crate::b::Beta"# }
fn chars() -> (char, char) { ('"', '\\'') }
/* a block /* nested */ crate::b::Beta */
#[cfg(all(test, not(loom)))]
mod tests {
    use crate::b::Beta;
}
''',
    "b.rs": '''
use crate::Alpha;
pub struct Beta<'a>(&'a Alpha);
fn helper() {
    let _ = "crate::a::inner";
    crate::low::helper();
}
#[test]
fn uses_anything() { let _ = crate::a::Alpha; }
#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::x::X;
}
''',
    "low.rs": '''
pub struct Shared;
pub fn helper() {}
/// See `crate::b::Beta`.
#[cfg(test)]
use crate::b::Beta;
#[test]
fn back() { let _ = crate::b::helper; }
''',
    "tools/mod.rs": '''
mod x;
mod y;
pub use x::X;
pub use y::Y;
''',
    "tools/x.rs": '''
use super::Y;
pub struct X(Y);
pub(in crate::tools) struct Hidden;
''',
    "tools/y.rs": '''
pub struct Y;
''',
    # Globs of another crate, one after another: looking up `plotters` (or `std`) among the
    # module's globs must not follow the glob being resolved (it recursed until Python gave up).
    "drawing.rs": '''
use plotters::prelude::*;
use std::fmt::*;
pub fn draw() -> Circle { Circle::new(plotters::style::RED) }
''',
}

CLEAN_EDGES = {("a/inner.rs", "low.rs"), ("b.rs", "a/inner.rs"), ("b.rs", "low.rs"),
               ("tools/x.rs", "tools/y.rs")}

# A crate with three kinds of circle.
CYCLIC = {
    "lib.rs": '''
mod a;
mod b;
pub mod m;
mod p;
mod q;
''',
    # Two files: one imports by `use`, the other by a path in code.
    "a.rs": '''
use crate::b::Beta;
pub struct Alpha(Beta);
''',
    "b.rs": '''
pub struct Beta;
pub fn f() -> Option<crate::a::Alpha> { None }
''',
    # A mod.rs that uses what it re-exports, and a child that uses the mod.rs's own type.
    "m/mod.rs": '''
mod reg;
pub use reg::Reg;
pub struct Owner;
impl Owner { pub fn register(&self) -> Reg { Reg } }
''',
    "m/reg.rs": '''
use super::Owner;
pub struct Reg;
impl Reg { pub fn owner(&self) -> Option<&Owner> { None } }
''',
    # Rooms p and q import each other, through four different files.
    "p/mod.rs": "mod one;\nmod four;\npub use four::Four;\n",
    "p/one.rs": "use crate::q::two::Two;\npub struct One(Two);\n",
    "p/four.rs": "pub struct Four;\n",
    "q/mod.rs": "pub mod two;\nmod three;\n",
    "q/two.rs": "pub struct Two;\n",
    "q/three.rs": "pub fn three() -> crate::p::Four { crate::p::Four }\n",
}

# A folder with a library and a binary: the circle is in the binary's tree only, which reading
# lib.rs alone never saw.
TWO_ROOTS = {
    "lib.rs": "pub mod shared;\n",
    "shared.rs": "pub struct Shared;\n",
    "main.rs": "mod cli;\nmod run;\npub struct Args;\nfn main() { run::go(); }\n",
    "cli.rs": "use crate::run::Outcome;\npub fn parse() -> Outcome { Outcome }\n",
    "run.rs": "pub struct Outcome;\npub fn go() { crate::cli::parse(); }\n",
}

CYCLIC_FILE_CIRCLES = {("a.rs", "b.rs"), ("m/mod.rs", "m/reg.rs")}
CYCLIC_ROOM_CIRCLES = {("a", "b"), ("p", "q")}


def write_crate(root, files):
    for name, text in files.items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def self_test():
    import io
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        clean = os.path.join(tmp, "clean", "src")
        cyclic = os.path.join(tmp, "cyclic", "src")
        write_crate(clean, CLEAN)
        write_crate(cyclic, CYCLIC)
        two_roots = os.path.join(tmp, "two_roots", "src")
        write_crate(two_roots, TWO_ROOTS)

        out = io.StringIO()
        status = check([clean], out)
        if status != 0:
            failures.append(f"the crate without a circle failed (status {status}):\n"
                            + out.getvalue())
        graph = Graph([Crate(clean)])
        edges = {(a.rel(), b.rel()) for a in graph.edges for b in graph.edges[a]}
        if edges != CLEAN_EDGES:
            failures.append(f"the crate without a circle gave imports {sorted(edges)}, "
                            f"expected {sorted(CLEAN_EDGES)}")

        out = io.StringIO()
        status = check([cyclic], out)
        text = out.getvalue()
        if status != 1:
            failures.append(f"the crate with circles passed (status {status}):\n" + text)
        crate = Crate(cyclic)
        graph = Graph([crate])
        succ = lambda f: list(graph.edges[f])  # noqa: E731
        file_circles = {tuple(sorted(f.rel() for f in c))
                        for comp in strongly_connected(crate.files, succ)
                        for c in circles_in(comp, succ, File.rel)}
        if file_circles != CYCLIC_FILE_CIRCLES:
            failures.append(f"file circles {sorted(file_circles)}, "
                            f"expected {sorted(CYCLIC_FILE_CIRCLES)}:\n" + text)
        for a, b in CYCLIC_ROOM_CIRCLES:
            if f"room circle: {a} -> {b} -> {a}" not in text:
                failures.append(f"no room circle {a} -> {b} -> {a} in:\n" + text)
        if "circle: a.rs -> b.rs -> a.rs" not in text or HINT not in text:
            failures.append("the circle a.rs -> b.rs is not printed as a chain with the hint:\n"
                            + text)

        out = io.StringIO()
        status = check([two_roots], out)
        text = out.getvalue()
        if status != 1 or "(main.rs): 2 files import one another" not in text or \
                "circle: cli.rs -> run.rs -> cli.rs" not in text or "2 crates" not in text:
            failures.append(f"the binary's circle next to a library was missed (status {status}):\n"
                            + text)
    if failures:
        for f in failures:
            print("self-test FAILED: " + f)
        return 1
    print("check-module-cycles: self-test passed (a crate without a circle passes, "
          "one with file and room circles fails and names them, a binary next to a library "
          "is checked too)")
    return 0


def main(argv):
    if "-h" in argv or "--help" in argv:
        print(__doc__)
        return 0
    if "--self-test" in argv:
        return self_test()
    src_dirs = argv
    if not src_dirs:
        repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        src_dirs = workspace_src_dirs(repo)
    return check(src_dirs)


def workspace_src_dirs(repo):
    """Every crates/*/src holding a lib.rs or a main.rs, so a new crate is checked unasked."""
    crates = os.path.join(repo, "crates")
    found = []
    for name in sorted(os.listdir(crates)):
        src = os.path.join(crates, name, "src")
        if os.path.isdir(src) and root_files(src):
            found.append(src)
    return found


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
