"""Fitting a line and a quadratic by least squares, three ways."""
import numpy as np

x = np.linspace(-2, 3, 25)
noise = 0.3 * np.sin(7 * x)
y = 1.5 * x ** 2 - 2.0 * x + 0.7 + noise

A = np.vstack([x, np.ones_like(x)]).T
line, res, rank, sv = np.linalg.lstsq(A, y, rcond=None)
print("line coefficients:", np.round(line, 6), "rank:", rank)

V = np.stack([x ** 2, x, np.ones_like(x)], axis=1)
coef = np.linalg.solve(V.T @ V, V.T @ y)
print("quadratic via normal equations:", np.round(coef, 6))
coef2 = np.linalg.pinv(V) @ y
print("quadratic via pinv:", np.round(coef2, 6))
Q, R = np.linalg.qr(V)
coef3 = np.linalg.solve(R, Q.T @ y)
print("QR agrees:", np.allclose(coef3, coef))
fit = V @ coef
resid = y - fit
print(f"rss = {np.sum(resid ** 2):.6f}, r2 = {1 - resid.var() / y.var():.6f}")
print("condition number:", f"{np.linalg.cond(V):.3f}")
