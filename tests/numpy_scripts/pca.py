"""Principal component analysis with the SVD."""
import numpy as np

t = np.arange(120)
X = np.column_stack([
    np.sin(t * 0.1) * 3 + np.cos(t * 0.37),
    np.sin(t * 0.1) * 2 - 0.5 * np.cos(t * 0.91),
    np.cos(t * 0.05) + 0.1 * np.sin(t * 1.7),
    0.3 * np.sin(t * 2.3),
])
Xc = X - X.mean(axis=0)
U, S, Vt = np.linalg.svd(Xc, full_matrices=False)
signs = np.sign(Vt[np.arange(Vt.shape[0]), np.abs(Vt).argmax(axis=1)])
Vt = Vt * signs[:, None]
U = U * signs
explained = S ** 2 / np.sum(S ** 2)
print("singular values:", np.round(S, 6))
print("explained variance ratio:", np.round(explained, 6))
print("cumulative:", np.round(np.cumsum(explained), 6))
k = np.searchsorted(np.cumsum(explained), 0.95) + 1
print("components for 95%:", k)
print("first component:", np.round(Vt[0], 6))
scores = Xc @ Vt[:k].T
print("scores shape:", scores.shape, "var:", np.round(scores.var(axis=0, ddof=1), 6))
recon = scores @ Vt[:k] + X.mean(axis=0)
print("reconstruction error:", f"{np.sqrt(np.mean((recon - X) ** 2)):.6f}")
