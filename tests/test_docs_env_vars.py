"""Every ``CLNP_*`` environment variable the packages read is documented: a row of the table in
docs/env_vars.md and a name in docs/index.md's line about that page. A variable added to the
code without a line in the docs fails here, and so does a row for a variable nothing reads.
"""
from __future__ import annotations

import ast
import functools
import io
import os
import re
import tokenize

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("clnp", "clnp_grad", "clnp_nn")


def _python_files(*folders: str) -> list[str]:
    files = []
    for folder in folders:
        for base, _, names in os.walk(os.path.join(ROOT, folder)):
            files += [os.path.join(base, n) for n in sorted(names) if n.endswith(".py")]
    return files


def _reads(path: str) -> tuple[set[str], list[str]]:
    """The variable names ``path`` reads (``os.environ.get("X")``, ``os.environ["X"]``,
    ``os.getenv("X")``, ``"X" in os.environ``), and the uses of ``environ``/``getenv`` whose
    name is not a string literal there, which this test cannot see. Tokens, not text, so
    docstrings and comments that mention ``os.environ`` are not reads."""
    src = open(path, encoding="utf-8").read()
    if "environ" not in src and "getenv" not in src:
        return set(), []                               # most files: no need to tokenize
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
    toks = [t for t in tokenize.generate_tokens(io.StringIO(src).readline) if t.type not in skip]
    names: set[str] = set()
    opaque = []
    for i, t in enumerate(toks):
        if t.type != tokenize.NAME or t.string not in ("environ", "getenv"):
            continue
        after = [u.string for u in toks[i + 1:i + 4]]
        if toks[i - 1].string == "import" or (toks[i - 1].string == "," and any(
                u.string == "import" for u in toks[max(i - 8, 0):i])):
            continue                                   # from os import environ
        arg = None
        if t.string == "environ" and after == [".", "get", "("]:
            arg = toks[i + 4]
        elif (t.string == "environ" and after[:1] == ["["]) or \
                (t.string == "getenv" and after[:1] == ["("]):
            arg = toks[i + 2]                          # environ["X"], getenv("X")
        else:                                          # "X" in os.environ, "X" not in environ
            k = i - 2 if toks[i - 1].string == "." and toks[i - 2].string == "os" else i
            if toks[k - 1].string == "in":
                k -= 2 if toks[k - 2].string == "not" else 1
                arg = toks[k - 1]
        if arg is not None and arg.type == tokenize.STRING:
            names.add(ast.literal_eval(arg.string))
        else:
            opaque.append(f"{os.path.relpath(path, ROOT)}:{t.start[0]}: "
                          f"{src.splitlines()[t.start[0] - 1].strip()}")
    return names, opaque


@functools.lru_cache(maxsize=None)
def package_variables() -> frozenset[str]:
    names: set[str] = set()
    opaque: list[str] = []
    for path in _python_files(*PACKAGES):
        got, bad = _reads(path)
        names |= got
        opaque += bad
    assert not opaque, ("these lines read the environment with a name this test cannot see; "
                        "use a string literal:\n" + "\n".join(opaque))
    return frozenset(n for n in names if n.startswith("CLNP_"))


def _table_variables() -> set[str]:
    text = open(os.path.join(ROOT, "docs", "env_vars.md"), encoding="utf-8").read()
    return set(re.findall(r"^\|\s*`(CLNP_\w+)`\s*\|", text, re.M))


def _index_variables() -> set[str]:
    text = open(os.path.join(ROOT, "docs", "index.md"), encoding="utf-8").read()
    # the list item that links env_vars.md, with its continuation lines
    item = re.search(r"^- \[env_vars\.md\]\(env_vars\.md\).*?(?=^- |^\s*$)", text, re.M | re.S)
    assert item, "docs/index.md has no list item linking env_vars.md"
    return set(re.findall(r"`(CLNP_\w+)`", item.group(0)))


def test_the_collector_sees_every_form_of_read(tmp_path):
    """The collector finds reads of every form, skips prose, and reports a read whose name it
    cannot see; on the packages it finds the variables known to be read, so an empty or
    partial set cannot pass the checks below."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        'import os\nfrom os import environ, getenv\n'
        '"""os.environ is read below."""  # os.environ.get("CLNP_PROSE")\n'
        'a = os.environ.get("CLNP_A", "1")\nb = os.environ["CLNP_B"]\n'
        "c = os.getenv('CLNP_C')\nd = 'CLNP_D' not in os.environ\ne = \"CLNP_E\" in environ\n"
        "f = os.environ.get(name)\n")
    names, opaque = _reads(str(sample))
    assert names == {"CLNP_A", "CLNP_B", "CLNP_C", "CLNP_D", "CLNP_E"}
    assert len(opaque) == 1 and "os.environ.get(name)" in opaque[0]
    assert {"CLNP_DEVICE", "CLNP_DEBUG", "CLNP_CACHE_DIR", "CLNP_LOG_COMPILES",
            "CLNP_NCCL", "CLNP_MPI_TIMEOUT"} <= package_variables()


def test_every_variable_the_code_reads_is_in_env_vars_md():
    missing = sorted(package_variables() - _table_variables())
    assert not missing, f"docs/env_vars.md has no row for {missing}; add one saying what it does"


def test_every_variable_the_code_reads_is_in_the_index():
    missing = sorted(package_variables() - _index_variables())
    assert not missing, f"docs/index.md's env_vars.md line does not name {missing}"


def test_every_documented_variable_is_read_somewhere():
    """A row for a variable that nothing reads any more is a stale promise. Rows for the test
    suite's own variables are read under tests/."""
    read: set[str] = set()
    for path in _python_files(*PACKAGES, "tests", "tools", "bench", "examples"):
        read |= _reads(path)[0]
    stale = sorted((_table_variables() | _index_variables()) - read)
    assert not stale, f"documented but read nowhere: {stale}"
