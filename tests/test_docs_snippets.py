"""The README's Python snippets, and docs/nn.md's end-to-end module example, run as a newcomer
pastes them: each ```python block alone, in a fresh interpreter and a fresh namespace, with
nothing defined beforehand. A snippet that uses a name it does not define, or an API that
changed, fails here with a traceback pointing at the line of the markdown file.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from conftest import env_importing_this_checkout

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
NN_EXAMPLE = "## A first model, end to end"

# Runs in the child: exec in a fresh namespace, compiled under the markdown file's name and
# padded with blank lines, so a traceback names the markdown file and its line.
RUNNER = """
import sys
path, line, src = sys.argv[1], int(sys.argv[2]), sys.stdin.read()
exec(compile("\\n" * (line - 1) + src, path, "exec"), {"__name__": "__main__"})
"""


def _blocks(rel: str, under: str | None = None) -> list[tuple[str, int, str]]:
    """(file, first line, source) of every ```python block of ``rel``; with ``under``, only
    those in the section that starts with that heading."""
    text = open(os.path.join(ROOT, rel), encoding="utf-8").read()
    start, end = 0, len(text)
    if under is not None:
        start = text.index(under + "\n")
        level = under.split(" ", 1)[0]
        nxt = re.compile(rf"^#{{1,{len(level)}}} ", re.M).search(text, start + len(under))
        end = nxt.start() if nxt else end
    out = []
    for m in FENCE.finditer(text, start, end):
        out.append((rel, text.count("\n", 0, m.start(1)) + 1, m.group(1)))
    return out


README_BLOCKS = _blocks("README.md")
NN_BLOCKS = _blocks("docs/nn.md", under=NN_EXAMPLE)
SNIPPETS = README_BLOCKS + NN_BLOCKS


_RESULTS: dict[tuple[str, int], subprocess.CompletedProcess] = {}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    # where a snippet that writes files (checkpoints, plots) writes them
    return tmp_path_factory.mktemp("snippets")


def _run(rel: str, line: int, src: str, cwd) -> subprocess.CompletedProcess:
    """Run one snippet (once per test session: the tests below share the result)."""
    if (rel, line) not in _RESULTS:
        env = env_importing_this_checkout()
        # a fresh interpreter: no module imported by other tests, no device or setting they
        # chose
        _RESULTS[rel, line] = subprocess.run(
            [sys.executable, "-c", RUNNER, os.path.join(ROOT, rel), str(line)], input=src,
            capture_output=True, text=True, cwd=cwd, env=env, timeout=600)
    return _RESULTS[rel, line]


def test_snippets_are_found():
    """The extraction sees the blocks, so the parametrized test below cannot pass vacuously:
    the README has its quick-start, scikit-learn, transforms and pmap blocks, and nn.md's
    section holds one block."""
    assert len(README_BLOCKS) >= 4, README_BLOCKS
    assert len(NN_BLOCKS) == 1, f"docs/nn.md: expected one ```python block under {NN_EXAMPLE!r}"
    assert "class " in NN_BLOCKS[0][2] and "nn.Module" in NN_BLOCKS[0][2]


@pytest.mark.parametrize("rel,line,src", SNIPPETS, ids=[f"{r}:{n}" for r, n, _ in SNIPPETS])
def test_snippet_runs_alone(rel, line, src, workdir):
    if "sklearn" in src:
        pytest.importorskip("sklearn")
    out = _run(rel, line, src, workdir)
    assert out.returncode == 0, f"{rel}:{line} failed:\n{out.stderr[-4000:]}"
    # every snippet shows the reader a result; a silent one would print nothing to check
    assert out.stdout.strip(), f"{rel}:{line} printed nothing"


def test_nn_example_trains(workdir):
    """The module example's claim: the loss falls over its training steps."""
    rel, line, src = NN_BLOCKS[0]
    out = _run(rel, line, src, workdir)
    assert out.returncode == 0, out.stderr[-4000:]
    losses = [float(v) for v in re.findall(r"loss (\d+\.\d+)", out.stdout)]
    assert len(losses) >= 2, out.stdout
    assert losses[-1] < 0.75 * losses[0], out.stdout
