"""Vectorized Newton iteration: square roots, cube roots and polynomial roots."""
import numpy as np

a = np.array([2.0, 9.0, 10.0, 0.25, 1e6])
x = np.ones_like(a)
for it in range(30):
    x_new = 0.5 * (x + a / x)
    if np.all(np.abs(x_new - x) < 1e-14 * x_new):
        break
    x = x_new
print("iterations:", it, "sqrt:", x_new)
print("matches np.sqrt:", np.allclose(x_new, np.sqrt(a)))

coef = np.array([1.0, -6.0, 11.0, -6.0])   # (x-1)(x-2)(x-3)


def horner(c, x):
    r = np.zeros_like(x)
    for ci in c:
        r = r * x + ci
    return r


dcoef = coef[:-1] * np.arange(len(coef) - 1, 0, -1)
z = np.linspace(0.0, 4.0, 9)
for _ in range(40):
    z = z - horner(coef, z) / horner(dcoef, z)
print("roots found:", np.unique(np.round(z, 8)))
c = np.array([8.0, 27.0, 2.0])
y = c / 3
for _ in range(50):
    y = y - (y ** 3 - c) / (3 * y ** 2)
print("cube roots:", np.round(y, 12))
