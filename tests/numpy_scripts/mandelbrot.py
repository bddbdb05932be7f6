"""Escape-time counts of the Mandelbrot set on a coarse grid."""
import numpy as np

re = np.linspace(-2.0, 0.6, 40)
im = np.linspace(-1.2, 1.2, 20)
c = re[np.newaxis, :] + 1j * im[:, np.newaxis]
z = np.zeros_like(c)
counts = np.zeros(c.shape, dtype=int)
alive = np.ones(c.shape, dtype=bool)
for i in range(30):
    z[alive] = z[alive] ** 2 + c[alive]
    escaped = np.abs(z) > 2
    counts[alive & escaped] = i
    alive &= ~escaped
counts[alive] = 30
print("inside points:", alive.sum())
print("area estimate:", round(float(alive.mean() * 2.6 * 2.4), 6))
chars = " .:-=+*#%@"
for row in counts[::2]:
    print("".join(chars[v] for v in np.minimum(row // 3, 9).tolist()))
print("count histogram:", np.bincount(counts.ravel(), minlength=31)[[0, 1, 2, 5, 30]])
