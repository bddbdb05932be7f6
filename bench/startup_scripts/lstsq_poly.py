"""Least squares and polynomials: fit a cubic to noisy samples, evaluate, residuals, solve."""
import clnp as np

rng = np.random.default_rng(0)
x = np.linspace(-2.0, 2.0, 200)
y = 0.5 * x ** 3 - x ** 2 + 2.0 * x + 1.0 + 0.05 * rng.standard_normal(200)
A = np.stack([x ** k for k in range(3, -1, -1)], axis=1)
coef, res, rank, sv = np.linalg.lstsq(A, y, rcond=None)
print("coefficients", coef.tolist())
fit = A @ coef
print("rms residual %.5f" % float(np.sqrt(np.mean((fit - y) ** 2))))
# the same by the normal equations
coef2 = np.linalg.solve(A.T @ A, A.T @ y)
print("normal equations agree", bool(np.allclose(coef, coef2, atol=1e-6)))
# Horner evaluation on a fine grid, and the derivative's roots by bisection
xs = np.linspace(-2.0, 2.0, 1000)
val = np.zeros_like(xs)
for c in coef:
    val = val * xs + c
print("max on grid %.4f at %.4f" % (float(val.max()), float(xs[np.argmax(val)])))
print("condition number %.2f" % float(np.linalg.cond(A)))
print("rank", int(rank))
