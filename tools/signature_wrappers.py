"""clnp/_numpy/signatures_generated.py, the NumPy-signature wrappers of the namespace
functions, written from clnp/_numpy/signatures.py.

    python tools/signature_wrappers.py            # rewrite the module
    python tools/signature_wrappers.py --check    # exit 1 when it is stale

``import clnp`` used to generate and compile these wrappers' source on every start (0.02-0.03
s of a 0.2 s import, issue #27). The generated module is ordinary Python, so its bytecode is
cached like any other; ``signatures.install`` uses it while its fingerprint matches the
functions and tables, and builds the same wrappers itself otherwise (slower, never wrong).
tests/test_numpy_signatures.py fails while the module is stale.
"""
from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.path.join(ROOT, "clnp", "_numpy", "signatures_generated.py")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare, do not write")
    args = ap.parse_args()
    sys.path.insert(0, ROOT)
    import clnp  # noqa: F401  (runs install(), which records what it wrapped)
    from clnp._numpy.signatures import generated_module_source
    text = generated_module_source()
    try:
        with open(TARGET, encoding="utf-8") as f:
            current = f.read()
    except FileNotFoundError:
        current = None
    if args.check:
        if current != text:
            print(f"stale: {os.path.relpath(TARGET, ROOT)}; run python tools/signature_wrappers.py")
            return 1
        return 0
    if current != text:
        with open(TARGET, "w", encoding="utf-8") as f:
            f.write(text)
        print("wrote", os.path.relpath(TARGET, ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
