"""Explicit finite differences for the 1-D heat equation."""
import numpy as np

n = 51
L = 1.0
dx = L / (n - 1)
alpha = 0.01
dt = 0.4 * dx ** 2 / alpha
x = np.linspace(0, L, n)
u = np.sin(np.pi * x) + 0.5 * np.sin(3 * np.pi * x)
u[0] = u[-1] = 0.0
r = alpha * dt / dx ** 2
for step in range(200):
    u[1:-1] = u[1:-1] + r * (u[2:] - 2 * u[1:-1] + u[:-2])
t = 200 * dt
exact = np.exp(-alpha * np.pi ** 2 * t) * np.sin(np.pi * x) + 0.5 * np.exp(-alpha * 9 * np.pi ** 2 * t) * np.sin(3 * np.pi * x)
print(f"t = {t:.4f}")
print("max error:", f"{np.abs(u - exact).max():.3e}")
print("peak:", round(float(u.max()), 6), "at x =", x[u.argmax()])
print("energy:", round(float(np.sum(u ** 2) * dx), 8))
print("profile:", np.round(u[::10], 5))
