"""A ±1 walk (steps from a fixed pseudo-random sequence): excursions and first passages."""
import numpy as np

k = np.arange(1, 5001)
steps = np.where(np.sin(k * k * 0.618) > 0, 1, -1)
walk = np.cumsum(steps)
print("final position:", walk[-1])
print("max / min:", walk.max(), walk.min())
print("time of max:", walk.argmax())
first = np.argmax(np.abs(walk) >= 30)
print("first |x| >= 30 at step:", first + 1 if np.abs(walk).max() >= 30 else None)
returns = np.flatnonzero(walk == 0)
print("returns to origin:", len(returns), "first few:", returns[:5])
walks = np.cumsum(np.where(np.cos(np.outer(np.arange(1, 11), k[:500]) * 0.37) > 0, 1, -1), axis=1)
print("10 walks, final:", walks[:, -1])
print("mean square displacement (every 100):", (walks.astype(float) ** 2).mean(axis=0)[99::100])
