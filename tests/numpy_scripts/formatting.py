"""Reporting results: print options, f-strings and array2string."""
import numpy as np

x = np.linspace(0, 1, 7) ** 3 / 3
print(x)
np.set_printoptions(precision=3, suppress=True)
print(x)
print(np.array([1e-9, 1.0, 123456.789]))
np.set_printoptions(precision=8, suppress=False)
print(np.array([1e-9, 1.0, 123456.789]))
with np.printoptions(precision=2, floatmode="fixed"):
    print(np.array([1.0, 2.5, 3.14159]))
print(np.array2string(x, separator=", ", precision=4))
print(repr(np.arange(6).reshape(2, 3)))
print(repr(np.zeros(3, dtype=np.float32)))
print(repr(np.array([True, False])))
print(repr(np.array([1 + 2j, 3.5 - 1j])))
total = x.sum()
print(f"total={total:.5f} mean={x.mean():.3e} max={x.max():>10.4f}")
print("values:", ", ".join(f"{v:.2f}" for v in x))
print(np.arange(2000))
print(np.eye(3, dtype=int))
print(str(np.array(3.25)), str(np.array([], dtype=float)))
