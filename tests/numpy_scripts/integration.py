"""Numerical integration: trapezoid and Simpson rules by hand, and their errors."""
import numpy as np


def trap(f, a, b, n):
    x = np.linspace(a, b, n + 1)
    y = f(x)
    return (b - a) / n * (y[0] / 2 + y[1:-1].sum() + y[-1] / 2)


def simpson(f, a, b, n):
    x = np.linspace(a, b, n + 1)
    y = f(x)
    return (b - a) / (3 * n) * (y[0] + 4 * y[1:-1:2].sum() + 2 * y[2:-1:2].sum() + y[-1])


for n in (4, 16, 64, 256):
    t = trap(np.sin, 0, np.pi, n)
    s = simpson(np.sin, 0, np.pi, n)
    print(f"n={n:4d} trapezoid={t:.10f} err={abs(t - 2):.2e} simpson={s:.12f} err={abs(s - 2):.2e}")
g = lambda x: np.exp(-x ** 2)
print("gaussian:", f"{2 * simpson(g, 0, 6, 600):.10f}", "sqrt(pi):", f"{np.sqrt(np.pi):.10f}")
x = np.linspace(0, 1, 101)
y = x ** 2
cum = np.concatenate([[0.0], np.cumsum((y[1:] + y[:-1]) / 2 * np.diff(x))])
print("cumulative integral at 0.5, 1:", round(float(cum[50]), 6), round(float(cum[-1]), 6))
