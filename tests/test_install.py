"""How clnp is found once installed: through a plain path entry, so that the working folder
cannot shadow it (issue #28).

``pip install -e .`` (the README's commands) writes a ``.pth`` file naming the repository's
root (``package-dir = {"" = "."}`` in pyproject.toml makes setuptools choose it over its
import hook, which runs after the path finder). A user who clones into ``~/src/clnp`` and
runs ``~/src/try.py`` has the clone's folder ``clnp/`` (no ``__init__.py``) first on
``sys.path``: with the hook, Python imported that folder as an empty namespace package and
``clnp.ones`` was missing; with a path entry the real package is found.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import clnp
import clnp_grad
import clnp_nn

ROOT = Path(clnp.__file__).resolve().parents[1]


def test_a_folder_named_clnp_beside_the_script_does_not_shadow_the_package(tmp_path):
    for name in ("clnp", "clnp_grad", "clnp_nn"):
        (tmp_path / name).mkdir()                  # a clone's folder, and look-alikes
    (tmp_path / "clnp" / "README.md").write_text("a clone\n")
    script = tmp_path / "try.py"
    script.write_text("import clnp, clnp_grad, clnp_nn\n"
                      "print(clnp.__file__, clnp_grad.__file__, clnp_nn.__file__)\n"
                      "print(float(clnp.sum(clnp.ones(3))))\n")
    env = dict(os.environ)
    if not any(Path(p).resolve() == ROOT for p in sys.path if p and Path(p).is_dir()
               and p != os.getcwd()):
        # not installed (the tests run from a checkout): a path entry as the install makes
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         cwd=str(tmp_path), env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    files, total = res.stdout.splitlines()
    assert files.split() == [clnp.__file__, clnp_grad.__file__, clnp_nn.__file__]
    assert total == "3.0"


def test_editable_install_is_a_path_entry():
    """pyproject.toml keeps setuptools' editable install a plain ``.pth`` path entry."""
    text = (ROOT / "pyproject.toml").read_text()
    assert 'package-dir = {"" = "."}' in text
    hooks = [p for p in sys.path if p.endswith("site-packages")]
    finders = [f for d in hooks if os.path.isdir(d) for f in os.listdir(d)
               if f.startswith("__editable___clnp") and f.endswith("_finder.py")]
    assert not finders, f"an editable install through an import hook is present: {finders}"
