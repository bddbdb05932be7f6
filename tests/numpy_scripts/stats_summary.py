"""Descriptive statistics of a few measurement columns."""
import numpy as np

t = np.arange(200)
data = np.column_stack([
    20 + 5 * np.sin(t * 0.13) + 0.5 * np.cos(t * 1.7),
    100 + 30 * np.cos(t * 0.05) * np.sin(t * 0.011),
    np.abs(np.sin(t * 0.9)) * 3,
])
names = ["temperature", "pressure", "rain"]

print("shape:", data.shape)
for j, name in enumerate(names):
    col = data[:, j]
    print(f"{name:>12}: mean={col.mean():8.3f} std={col.std(ddof=1):7.3f} "
          f"min={col.min():8.3f} max={col.max():8.3f} median={np.median(col):8.3f}")
q = np.percentile(data, [5, 25, 50, 75, 95], axis=0)
print("quantiles:\n", np.round(q, 3))
z = (data - data.mean(axis=0)) / data.std(axis=0)
print("outliers per column:", (np.abs(z) > 1.5).sum(axis=0))
print("argmax rows:", data.argmax(axis=0))
print("correlation:\n", np.round(np.corrcoef(data, rowvar=False), 4))
print("covariance diag:", np.round(np.diag(np.cov(data.T)), 4))
