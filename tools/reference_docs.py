"""The API reference pages, docs/reference/*.md, written as markdown from the docstrings.

    python tools/reference_docs.py            # rewrite every page
    python tools/reference_docs.py --check    # exit 1, naming the pages, when one is stale

Each page is one public module: the hand-written text at the top of the page (its title and
introduction, above the ``MARKER`` line) is kept, and everything below the marker is
generated from the module's public names (``__all__``, else the names without a leading
underscore), sorted: a contents list with links, then each class (its constructor's
signature, its docstring, its public methods and properties), each function (signature and
docstring) and the constants. NumPy-format sections (Parameters, Returns, Raises, Examples,
...) become markdown lists and ``python`` code blocks, so the pages read on GitHub as they
are, and the documentation site (mkdocs.yml) shows the same files.

The output is deterministic: names are sorted, signatures drop annotations, and default
values whose repr carries a memory address or depends on the machine (a device) are written
stably, so tests/test_docs_reference.py regenerates every page and compares it with the
committed one.
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import os
import re
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFERENCE = os.path.join(ROOT, "docs", "reference")
PACKAGES = ("clnp", "clnp_grad", "clnp_nn")
MARKER = ("<!-- Generated below from the docstrings by tools/reference_docs.py: edit the "
          "docstrings, not this page, and run `python tools/reference_docs.py` -->")
COMMAND = "python tools/reference_docs.py"

# The pages: the module, and names documented beyond its public ones.
PAGES: dict[str, tuple[str, ...]] = {
    "clnp": ("__array_namespace_info__",),
    "clnp.linalg": (),
    "clnp.fft": (),
    "clnp.random": (),
    "clnp.emath": (),
    "clnp_grad": (),
    "clnp_grad.lax": (),
    "clnp_grad.random": (),
    "clnp_nn": (),
    "clnp_nn.functional": (),
    "clnp_nn.modules": (),
    "clnp_nn.modules.init": (),
    "clnp_nn.optim": (),
    "clnp_nn.amp": (),
    "clnp_nn.data": (),
    "clnp_nn.parallel": (),
}

# NumPy-format sections: those whose entries are ``name : type`` lines with indented text
ITEM_SECTIONS = ("Parameters", "Other Parameters", "Returns", "Yields", "Receives", "Raises",
                 "Warns", "Attributes", "See Also")
SECTIONS = ITEM_SECTIONS + ("Examples", "Notes", "References", "Warnings", "Methods")


@dataclasses.dataclass
class Entry:
    name: str            # the name on the page: ``sum``, ``Adam.update``
    obj: object
    kind: str            # "class", "function", "method", "property", "constant", "foreign"
    alias_of: str | None = None   # another name on the page for the same object


# --------------------------------------------------------------------------- collecting

def _home(obj: object) -> str:
    home = getattr(obj, "__module__", None)
    return home if isinstance(home, str) else type(obj).__module__


def _ours(obj: object) -> bool:
    return _home(obj).split(".")[0] in PACKAGES


def public_names(mod: types.ModuleType) -> list[str]:
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n in vars(mod) if not n.startswith("_")]
    return sorted(set(names))


def collect(module: str) -> list[Entry]:
    """The entries of a page, in page order within each kind (sorted by name)."""
    mod = importlib.import_module(module)
    entries = []
    for name in sorted(set(public_names(mod)) | set(PAGES.get(module, ()))):
        obj = getattr(mod, name)
        if isinstance(obj, types.ModuleType):
            continue                            # submodules have their own pages
        if inspect.isclass(obj):
            kind = "class" if _ours(obj) else "foreign"
        elif callable(obj):
            kind = "function" if _ours(obj) else "foreign"
        else:
            kind = "constant"
        entries.append(Entry(name, obj, kind))
    # an object under several names (``abs``/``absolute``) is documented once, under its
    # own ``__name__`` when the page has it, else under its first name
    by_id: dict[int, list[Entry]] = {}
    for e in entries:
        if e.kind in ("class", "function"):
            by_id.setdefault(id(e.obj), []).append(e)
    for group in by_id.values():
        if len(group) > 1:
            own = getattr(group[0].obj, "__name__", None)
            main = next((e for e in group if e.name == own), group[0])
            for e in group:
                if e is not main:
                    e.alias_of = main.name
    return entries


def members(entry: Entry) -> list[Entry]:
    """A class's own public methods (``__call__`` included) and properties, sorted."""
    found = []
    for name, attr in sorted(vars(entry.obj).items()):
        if name.startswith("_") and name != "__call__":
            continue
        fun = attr.__func__ if isinstance(attr, (staticmethod, classmethod)) else attr
        if isinstance(attr, property):
            found.append(Entry(f"{entry.name}.{name}", attr, "property"))
        elif inspect.isfunction(fun) and _ours(fun):
            found.append(Entry(f"{entry.name}.{name}", fun, "method"))
    return found


# --------------------------------------------------------------------------- signatures

_ADDRESS = re.compile(r" at 0x[0-9A-Fa-f]+")


def _stable_repr(value: object) -> str:
    """A default value's repr, the same on every machine."""
    from clnp._runtime.device import Device  # noqa: PLC0415
    if isinstance(value, Device):
        return "<device>"
    if inspect.isfunction(value) or inspect.isbuiltin(value) or inspect.isclass(value):
        return getattr(value, "__qualname__", getattr(value, "__name__", repr(value)))
    return _ADDRESS.sub("", repr(value))


class _Default:
    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def signature(name: str, obj: object) -> str:
    """``name(params)`` without annotations; for what inspect cannot read, the docstring's
    first line when it is a signature, else ``name(...)``."""
    short = name.rsplit(".", 1)[-1]
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        first = (inspect.getdoc(obj) or "").partition("\n")[0]
        return f"{name}{first[len(short):]}" if first.startswith(f"{short}(") else f"{name}(...)"
    params = []
    for p in sig.parameters.values():
        p = p.replace(annotation=inspect.Parameter.empty)
        if p.default is not inspect.Parameter.empty:
            p = p.replace(default=_Default(_stable_repr(p.default)))
        params.append(p)
    text = str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))
    return f"{name}{text}"


# --------------------------------------------------------------------------- docstrings

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|attr|mod|obj|data|exc|const|ref):`~?([^`]+)`")
_DOUBLE = re.compile(r"``([^`]+?)``")
_STARS = re.compile(r"(?<![\w`*\\])(\*\*?)(?=[A-Za-z_]\w*(?![\w*]))")


def inline(text: str) -> str:
    """RST inline markup as markdown: ``code`` and :func:`x` become code spans; a bare
    ``*args``/``**kwargs`` outside code is escaped (it is not emphasis)."""
    text = _ROLE.sub(r"`\1`", text)
    text = _DOUBLE.sub(r"`\1`", text)
    parts = re.split(r"(`[^`]*`)", text)
    for i in range(0, len(parts), 2):
        parts[i] = _STARS.sub(lambda m: "\\*" * len(m.group(1)), parts[i])
    return "".join(parts)


def split_sections(doc: str) -> list[tuple[str, list[str]]]:
    """``[(section, lines)]``; the summary and description come first, under ``""``."""
    lines = doc.splitlines()
    out: list[tuple[str, list[str]]] = [("", [])]
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() in SECTIONS and re.fullmatch(r"\s*-{3,}\s*", nxt):
            out.append((line.strip(), []))
            i += 2
            continue
        out[-1][1].append(line)
        i += 1
    return [(s, _trim(ls)) for s, ls in out]


def _trim(lines: list[str]) -> list[str]:
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def prose(lines: list[str]) -> list[str]:
    """Free text: inline markup converted; a ``::`` literal block becomes a code block."""
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        if line.rstrip().endswith("::") and not line.strip().startswith(".."):
            out.append(inline(line.rstrip()[:-1].rstrip() + (":" if line.strip() != "::"
                                                                else "")))
            block, i = [], i + 1
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith(" ")):
                block.append(lines[i])
                i += 1
            block = _trim(block)
            if block:
                indent = min(len(b) - len(b.lstrip()) for b in block if b.strip())
                out += ["", "```", *[b[indent:] for b in block], "```", ""]
            continue
        out.append(inline(line))
        i += 1
    return out


def items(lines: list[str]) -> list[tuple[str, list[str]]]:
    """``[(header, description lines)]`` of a Parameters-like section."""
    found: list[tuple[str, list[str]]] = []
    for line in lines:
        if line.strip() and not line[:1].isspace():
            found.append((line.strip(), []))
        elif found:
            found[-1][1].append(line)
        elif line.strip():
            found.append((line.strip(), []))
    out = []
    for header, desc in found:
        desc = _trim(desc)
        indent = min((len(d) - len(d.lstrip()) for d in desc if d.strip()), default=0)
        out.append((header, [d[indent:] for d in desc]))
    return out


def _code(text: str) -> str:
    return f"`{text}`" if "`" not in text else text


def render_items(section: str, lines: list[str]) -> list[str]:
    out = []
    for header, desc in items(lines):
        if section == "See Also":
            name, sep, rest = header.partition(" : ")
            names = ", ".join(_code(n.strip()) for n in name.split(",") if n.strip())
            head = f"- {names}" + (f": {inline(rest)}" if sep else "")
        elif section in ("Raises", "Warns") or " : " not in header and section in (
                "Returns", "Yields", "Receives"):
            head = f"- {_code(header)}"
        else:
            name, sep, typ = header.partition(" : ")
            head = f"- **{name.strip()}**" + (f" ({_code(typ.strip())})" if sep else "")
        body = prose(desc)
        if body:
            head += ": " + body[0]
        out.append(head)
        out += [("    " + b) if b.strip() else "" for b in body[1:]]
    return out


def render_examples(lines: list[str]) -> list[str]:
    """Doctest chunks (``>>>`` lines and their output) as ``python`` blocks, text between
    them as text."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith(">>>"):
            indent = len(lines[i]) - len(lines[i].lstrip())
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i][indent:] if lines[i][:indent].isspace() or not indent
                             else lines[i].lstrip())
                i += 1
            if out and out[-1] != "":
                out.append("")
            out += ["```python", *block, "```", ""]
        else:
            if lines[i].strip() or (out and out[-1] != ""):
                out.append(inline(lines[i].strip()) if lines[i].strip() else "")
            i += 1
    return _trim(out)


def render_doc(doc: str) -> list[str]:
    out: list[str] = []
    for section, lines in split_sections(doc):
        if not lines:
            continue
        if section:
            out += [f"**{section}**", ""]
        if section in ITEM_SECTIONS:
            body = render_items(section, lines)
        elif section == "Examples":
            body = render_examples(lines)
        else:
            body = prose(lines)
        out += body + [""]
    return out


def docstring(entry: Entry) -> str:
    doc = inspect.getdoc(entry.obj) or ""
    if entry.kind == "function" and not inspect.isroutine(entry.obj) and \
            doc == inspect.getdoc(type(entry.obj)) and type(entry.obj).__module__ != \
            _home(entry.obj):
        return ""
    first, _, rest = doc.partition("\n")
    short = entry.name.rsplit(".", 1)[-1]
    if entry.kind == "function" and first.startswith(f"{short}("):
        # a ufunc's docstring opens with its signature, which the page shows already
        doc = rest.lstrip("\n")
    return doc


# --------------------------------------------------------------------------- pages

def _heading(entry: Entry) -> str:
    """A class's heading says so (``Array`` and ``array`` would otherwise share an anchor)."""
    return f"class `{entry.name}`" if entry.kind == "class" else f"`{entry.name}`"


def _anchor(entry: Entry) -> str:
    """The anchor of an entry's heading, the same on GitHub and in mkdocs (the names are
    identifiers: a dot between class and method disappears, a space becomes ``-``)."""
    return _heading(entry).replace("`", "").replace(".", "").replace(" ", "-").lower()


def _constant(obj: object) -> str:
    text = _stable_repr(obj)
    if len(text) > 60 or "\n" in text:
        text = f"<{type(obj).__name__}>"
    return text.replace("|", "\\|")


def render_entry(entry: Entry, level: int) -> list[str]:
    out = [f"{'#' * level} {_heading(entry)}", ""]
    if entry.alias_of:
        main = Entry(entry.alias_of, None, entry.kind)
        return out + [f"The same object as [`{entry.alias_of}`](#{_anchor(main)}).", ""]
    if entry.kind == "property":
        out += ["*property*", ""]
    else:
        sig = signature(entry.name, entry.obj)
        out += ["```python", sig, "```", ""]
    doc = docstring(entry) if entry.kind != "property" else (inspect.getdoc(entry.obj) or "")
    out += render_doc(doc) if doc else ["*No docstring.*", ""]
    return out


def render(module: str) -> str:
    """The generated part of a page: everything below ``MARKER``."""
    entries = collect(module)
    groups = {k: [e for e in entries if e.kind == k]
              for k in ("class", "function", "constant", "foreign")}
    titles = {"class": "Classes", "function": "Functions", "constant": "Constants",
              "foreign": "Names from NumPy"}
    anchors = [_anchor(e) for e in entries if e.kind in ("class", "function")]
    anchors += [_anchor(m) for e in groups["class"] for m in members(e)]
    clashes = sorted({a for a in anchors if anchors.count(a) > 1})
    if clashes:
        raise ValueError(f"{module}: headings that share an anchor: {clashes}")
    out: list[str] = ["", "## Contents", ""]
    for kind in ("class", "function"):
        if groups[kind]:
            links = " · ".join(f"[`{e.name}`](#{_anchor(e)})" for e in groups[kind])
            out += [f"**{titles[kind]}:** {links}", ""]
    for kind in ("constant", "foreign"):
        if groups[kind]:
            out += [f"**{titles[kind]}:** [below](#{titles[kind].lower().replace(' ', '-')})",
                    ""]
    for kind in ("class", "function"):
        if not groups[kind]:
            continue
        out += [f"## {titles[kind]}", ""]
        for entry in groups[kind]:
            out += render_entry(entry, 3)
            if kind == "class":
                for member in members(entry):
                    out += render_entry(member, 4)
    if groups["constant"]:
        out += ["## Constants", "", "| name | value |", "|---|---|"]
        out += [f"| `{e.name}` | `{_constant(e.obj)}` |" for e in groups["constant"]]
        out += [""]
    if groups["foreign"]:
        out += ["## Names from NumPy", "",
                "NumPy's own objects, exported unchanged (NumPy documents them): "
                + ", ".join(f"`{e.name}`" for e in groups["foreign"]) + ".", ""]
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def page_path(module: str) -> str:
    return os.path.join(REFERENCE, f"{module}.md")


def head(module: str, text: str | None) -> str:
    """The hand-written top of a page (everything above the marker); a new page gets its
    title."""
    if text is None:
        return f"# `{module}`\n"
    if MARKER in text:
        return text.split(MARKER, 1)[0].rstrip("\n") + "\n"
    # a mkdocstrings stub: the text before its first ``:::`` directive
    return re.split(r"^:::", text, maxsplit=1, flags=re.M)[0].rstrip("\n") + "\n"


def page(module: str, current: str | None) -> str:
    return head(module, current) + "\n" + MARKER + "\n" + render(module)


def undocumented(module: str, methods: bool = False) -> list[str]:
    """The page's functions and classes that have no docstring; with ``methods``, the
    public methods and properties of its classes that have none."""
    missing = []
    for entry in collect(module):
        if entry.kind not in ("class", "function") or entry.alias_of:
            continue
        if not methods and not docstring(entry).strip():
            missing.append(f"{module}.{entry.name}")
        if methods and entry.kind == "class":
            missing += [f"{module}.{m.name}" for m in members(entry)
                        if not (inspect.getdoc(m.obj) or "").strip()]
    return missing


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 naming the stale pages")
    parser.add_argument("modules", nargs="*", help="only these pages (default: all)")
    args = parser.parse_args(argv)
    stale = []
    for module in args.modules or PAGES:
        path = page_path(module)
        current = _read(path)
        want = page(module, current)
        if want != current:
            stale.append(os.path.relpath(path, ROOT))
            if not args.check:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(want)
        for name in undocumented(module) + undocumented(module, methods=True):
            print(f"no docstring: {name}", file=sys.stderr)
    if args.check and stale:
        print("stale: " + ", ".join(stale) + f"; run: {COMMAND}", file=sys.stderr)
        return 1
    for rel in stale if not args.check else ():
        print(f"wrote {rel}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    sys.exit(main())
