"""The training examples in examples/ (digits MLP, digits CNN, character transformer).

Each example runs in a fresh interpreter on the default device, with a small budget, and
reports its result as JSON on its last line. The full-accuracy runs are marked ``slow`` (not
run by default; ``python -m pytest -m slow tests/nn/test_examples.py``).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("tqdm")
pytest.importorskip("matplotlib")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")

_DRIVER = """
import json, sys
sys.path.insert(0, {examples!r})
import {module} as ex
r = ex.train({argv!r})
h = r["history"]
print(json.dumps({{"metrics": h.evals[-1][1], "losses": h.losses, "plot": r["plot"],
                  "sample": r.get("sample")}}))
"""


def run_example(module: str, argv: list[str], timeout: float = 600) -> dict:
    """Run ``examples/<module>.py``'s ``train(argv)`` in a fresh interpreter and return what it
    recorded. A separate process keeps a crash of the example out of the test session."""
    code = _DRIVER.format(examples=EXAMPLES, module=module, argv=argv)
    proc = subprocess.run([sys.executable, "-c", code], check=False, cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, (f"{module} {argv} exited with {proc.returncode}:\n"
                                  f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _png(path: str) -> bool:
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_digits_mlp_one_epoch(tmp_path):
    plot = str(tmp_path / "mlp.png")
    r = run_example("digits_mlp", ["--epochs", "1", "--lr", "1e-2", "--plot", plot,
                                   "--no-progress"], timeout=120)
    assert r["metrics"]["test_acc"] > 0.8
    assert r["losses"][-1] < r["losses"][0]
    assert r["plot"] == plot and _png(plot)


def test_digits_cnn_small_subset(tmp_path):
    plot = str(tmp_path / "cnn.png")
    r = run_example("digits_cnn", ["--epochs", "3", "--train-subset", "768", "--width", "8",
                                   "--plot", plot, "--no-progress"], timeout=240)
    assert r["metrics"]["test_acc"] > 0.8
    assert r["losses"][-1] < r["losses"][0]
    assert _png(plot)


def test_char_transformer_loss_falls(tmp_path):
    r = run_example("char_transformer", ["--steps", "20", "--dim", "32", "--layers", "1",
                                         "--batch-size", "16", "--block", "32",
                                         "--sample-chars", "20", "--plot", "",
                                         "--no-progress"], timeout=240)
    first, last = sum(r["losses"][:3]) / 3, sum(r["losses"][-3:]) / 3
    assert last < first - 0.3, r["losses"]
    assert r["plot"] is None
    assert r["sample"].startswith("def ") and len(r["sample"]) == 24


@pytest.mark.slow
@pytest.mark.parametrize("module", ["digits_mlp", "digits_cnn"])
def test_digits_full_accuracy(module, tmp_path):
    r = run_example(module, ["--plot", "", "--no-progress"])
    assert r["metrics"]["test_acc"] >= 0.97, r["metrics"]


@pytest.mark.slow
def test_digits_cnn_amp_matches_float32():
    """Mixed precision (float16 compute, dynamic loss scaling) within 0.5 points of float32."""
    f32 = run_example("digits_cnn", ["--plot", "", "--no-progress"])["metrics"]["test_acc"]
    f16 = run_example("digits_cnn", ["--amp", "--plot", "", "--no-progress"])
    acc16 = f16["metrics"]["test_acc"]
    assert abs(acc16 - f32) <= 0.005, (f32, acc16)
