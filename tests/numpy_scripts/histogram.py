"""Histograms with histogram, bincount and searchsorted."""
import numpy as np

x = 10 * np.sin(np.arange(1000) * 0.123) ** 2 + np.cos(np.arange(1000) * 2.1)
counts, edges = np.histogram(x, bins=8)
print("edges:", np.round(edges, 3))
print("counts:", counts, "total:", counts.sum())
density, _ = np.histogram(x, bins=edges, density=True)
print("density integrates to:", round(float((density * np.diff(edges)).sum()), 10))
c2, e2 = np.histogram(x, bins=[-1, 0, 2, 5, 11], range=None)
print("custom bins:", c2)
idx = np.searchsorted(edges[1:-1], x, side="right")
print("searchsorted counts match:", np.array_equal(np.bincount(idx, minlength=8), counts))
w = np.bincount(idx, weights=x, minlength=8) / np.maximum(counts, 1)
print("bin means:", np.round(w, 3))
mode_bin = counts.argmax()
print(f"modal bin: [{edges[mode_bin]:.3f}, {edges[mode_bin + 1]:.3f})")
for c, lo in zip(counts, edges[:-1]):
    print(f"{lo:7.2f} | " + "#" * int(c // 10))
