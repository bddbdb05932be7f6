"""The documentation: every relative link and file reference in docs/ and README.md resolves
(anchors included), the site builds with warnings as errors, and the NumPy coverage tool runs.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import unicodedata

import pytest

from conftest import load_tool

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")


def _doc_files() -> list[str]:
    files = [os.path.join(ROOT, "README.md")]
    for folder, _, names in os.walk(DOCS):
        files += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".md")]
    return sorted(files)


FILES = _doc_files()
FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]+`")
LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$", re.M)
HTML_REF = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']""")
# plain-text mentions of files: `docs/jit.md`, DESIGN.md, `bench/results/gemm-pocl-cpu.csv`
CODE_PATH = re.compile(r"`((?:\.{0,2}/)?[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+\.[A-Za-z]{1,5})`")
MD_MENTION = re.compile(r"(?<![\w/.(\[-])((?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-]+\.md)\b")


def _rel(path: str) -> str:
    return os.path.relpath(path, ROOT)


def _strip_code(text: str) -> str:
    return INLINE_CODE.sub("", FENCE.sub("", text))


def _slugify(heading: str) -> str:
    """Python-Markdown's toc slug of a heading written in markdown (mkdocs' anchors)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)       # links keep their text
    text = re.sub(r"<[^>]+>", "", text)
    # emphasis markers go, except inside code spans (`__array_namespace_info__`)
    text = "".join(part[1:-1] if part.startswith("`") else re.sub(r"(\*\*|__|\*)", "", part)
                   for part in re.split(r"(`[^`]*`)", text))
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(path: str) -> set[str] | None:
    """The heading anchors of a markdown file; None where they are generated at build time
    (a page with mkdocstrings' ``:::`` directives; the reference pages are plain markdown)."""
    text = open(path, encoding="utf-8").read()
    if re.search(r"^:::", text, re.M):
        return None
    seen: dict[str, int] = {}
    anchors = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", FENCE.sub("", text), re.M):
        slug = _slugify(heading)
        n = seen.get(slug, 0)
        anchors.add(slug if n == 0 else f"{slug}_{n}")
        seen[slug] = n + 1
    return anchors


def _inside(path: str, root: str) -> bool:
    return os.path.commonpath([os.path.realpath(path), os.path.realpath(root)]) == \
        os.path.realpath(root)


def _problems(path: str, root: str = ROOT) -> list[str]:
    """What is broken in ``path``'s links and mentions; a target outside ``root`` (the
    repository) counts as missing."""
    text = open(path, encoding="utf-8").read()
    prose = _strip_code(text)
    folder = os.path.dirname(path)
    problems = []
    targets = LINK.findall(prose) + REF_DEF.findall(prose) + HTML_REF.findall(prose)
    for target in targets:
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
            continue                                  # http:, https:, mailto:
        file_part, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(folder, file_part)) if file_part else path
        if not os.path.exists(dest) or not _inside(dest, root):
            problems.append(f"link {target!r}: {_rel(dest)} does not exist in the repository")
            continue
        if anchor and dest.endswith(".md"):
            anchors = _anchors(dest)
            if anchors is not None and anchor not in anchors:
                problems.append(f"link {target!r}: {_rel(dest)} has no heading with anchor "
                                f"#{anchor}")
    mentions = set(CODE_PATH.findall(FENCE.sub("", text))) | set(MD_MENTION.findall(prose))
    for mention in sorted(mentions):
        candidates = [os.path.join(folder, mention), os.path.join(root, mention),
                      os.path.join(root, "docs", mention)]
        # a path outside the repository resolves only on machines that have it beside the
        # clone (the developers' ../shared/): a fresh clone elsewhere does not
        if not any(os.path.exists(c) and _inside(c, root) for c in candidates):
            problems.append(f"mentions {mention!r}, which is not in the repository "
                            "(relative to the file, the repository root or docs/)")
    return problems


@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_relative_links_resolve(path):
    problems = _problems(path)
    assert not problems, f"{_rel(path)}:\n  " + "\n  ".join(problems)


def test_link_checker_finds_broken_links(tmp_path):
    """The checker itself: a missing file, a missing anchor and a missing mentioned doc are
    reported, and valid ones are not."""
    (tmp_path / "a.md").write_text("# Title\n\n## Some `code` (here)\n")
    (tmp_path / "b.md").write_text(
        "[ok](a.md) [ok](a.md#some-code-here) [ok](#x) ![img](a.md)\n# x\n"
        "[bad](missing.md) [bad](a.md#nowhere) see NOWHERE.md\n"
        "```\n[in code](ignored.md)\n```\n")
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "c.md").write_text("[outside](../a.md) see ../a.md\n")
    problems = _problems(str(tmp_path / "b.md"), root=str(tmp_path))
    assert len(problems) == 3, problems
    assert any("missing.md" in p for p in problems)
    assert any("#nowhere" in p for p in problems)
    assert any("NOWHERE.md" in p for p in problems)
    # a file beside the repository exists, but not in a fresh clone elsewhere
    outside = _problems(str(tmp_path / "repo" / "c.md"), root=str(tmp_path / "repo"))
    assert len(outside) == 2 and all("../a.md" in p for p in outside), outside


def test_docstrings_cite_existing_docs():
    """Docstrings and comments that point the reader at docs/*.md point at a real file."""
    missing = []
    for package in ("clnp", "clnp_grad", "clnp_nn"):
        for folder, _, names in os.walk(os.path.join(ROOT, package)):
            for name in names:
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    for cited in re.findall(r"\bdocs/[\w./-]+\.md\b", open(path).read()):
                        if not os.path.exists(os.path.join(ROOT, cited)):
                            missing.append(f"{_rel(path)} cites {cited}")
    assert not missing, "\n".join(missing)


def _coverage_tool():
    return load_tool("numpy_coverage")


def test_numpy_coverage_tool_runs(tmp_path):
    """tools/numpy_coverage.py runs on the live modules, its counts add up, and it rewrites
    only the generated section of a file."""
    tool = _coverage_tool()
    import numpy

    import clnp
    sections = tool.collect(numpy, clnp)
    by_title = {s.title: s for s in sections}
    functions = by_title["`numpy` functions"]
    assert "sum" in functions.present and "sum" not in functions.missing
    for s in sections:
        assert len(s.present) + len(s.missing) == len(s.names)
    assert all(callable(getattr(numpy, n)) for n in functions.names)
    assert all(n in functions.present for n in functions.names if hasattr(clnp, n))
    page = tmp_path / "api.md"
    page.write_text("# Hand-written\n\nkept\n")
    tool.main(["--write", str(page)])
    once = page.read_text()
    tool.main(["--write", str(page)])
    assert page.read_text() == once, "rewriting must replace the section, not append again"
    assert once.startswith("# Hand-written\n\nkept\n") and once.count(tool.BEGIN) == 1
    assert "## NumPy coverage" in once and "| `numpy` functions |" in once
    out = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "numpy_coverage.py")],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("## NumPy coverage")


def test_api_page_has_the_generated_section():
    text = open(os.path.join(DOCS, "api.md"), encoding="utf-8").read()
    tool = _coverage_tool()
    assert text.count(tool.BEGIN) == 1 and text.count(tool.END) == 1
    assert text.index(tool.BEGIN) < text.index(tool.END)


def test_generated_coverage_is_current():
    """The coverage sections of docs/api.md and docs/numpy-migration.md (every count, every
    missing name and its reason) are what tools/numpy_coverage.py computes from the live
    modules: the counts are never typed by hand, and a name added to clnp without
    regenerating the pages fails here. Skipped under another NumPy than the pages name
    (NumPy's own namespace differs between versions)."""
    tool = _coverage_tool()
    import numpy

    import clnp
    sections = tool.collect(numpy, clnp)
    fix = ("run: python tools/numpy_coverage.py --write docs/api.md --summary "
           "docs/numpy-migration.md")
    for page, render in (("api.md", tool.render), ("numpy-migration.md", tool.render_summary)):
        text = open(os.path.join(DOCS, page), encoding="utf-8").read()
        block = text.split(tool.BEGIN + "\n", 1)[1].split(tool.END, 1)[0]
        versions = re.search(r"\((NumPy [^ ,)]+), clnp [^)]+\)", block)
        assert versions, f"docs/{page}: no version line in the generated section; {fix}"
        if versions.group(1) != f"NumPy {numpy.__version__}":
            pytest.skip(f"docs/{page} was generated with {versions.group(1)}; this is NumPy "
                        f"{numpy.__version__}")
        want = render(sections, versions.group(0)[1:-1])
        assert block == want, f"docs/{page}: the coverage section is stale; {fix}"


def test_site_builds_strict(tmp_path):
    """mkdocs.yml builds docs/ with warnings as errors, the reference pages included (the
    markdown that tools/reference_docs.py generates from the docstrings)."""
    pytest.importorskip("mkdocs")
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                          "-f", os.path.join(ROOT, "mkdocs.yml"), "-d", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout[-5000:] + out.stderr[-5000:]
    for page in ("index.html", "numpy-migration/index.html", "reference/clnp_grad/index.html"):
        assert (tmp_path / "site" / page).exists(), page
    grad_page = (tmp_path / "site" / "reference" / "clnp_grad" / "index.html").read_text()
    assert 'id="value_and_grad"' in grad_page
    # the ufuncs are objects, documented like the functions
    clnp_page = (tmp_path / "site" / "reference" / "clnp" / "index.html").read_text()
    assert 'id="add"' in clnp_page and 'id="sin"' in clnp_page
    for sub in ("functional", "modules", "optim", "amp", "data", "parallel"):
        page = tmp_path / "site" / "reference" / f"clnp_nn.{sub}" / "index.html"
        assert page.exists(), page
    nn_page = (tmp_path / "site" / "reference" / "clnp_nn.functional" / "index.html")
    assert 'id="linear"' in nn_page.read_text()
