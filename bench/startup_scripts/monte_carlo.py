"""Random-walk Monte Carlo: many walkers, first passage, mean squared displacement, pi."""
import clnp as np

rng = np.random.default_rng(42)
walkers, steps = 2000, 200
moves = rng.choice(np.asarray([-1, 1]), size=(walkers, steps))
paths = np.cumsum(moves, axis=1)
msd = (paths.astype(np.float64) ** 2).mean(axis=0)
print("msd at 50/100/200", float(msd[49]), float(msd[99]), float(msd[199]))
hit = np.abs(paths) >= 10
first = np.where(hit.any(axis=1), np.argmax(hit, axis=1), steps)
print("mean first passage %.2f" % float(first.mean()))
print("final spread %.3f" % float(paths[:, -1].std()))
pts = rng.random((100_000, 2))
inside = (pts ** 2).sum(axis=1) <= 1.0
print("pi ~ %.4f" % float(4 * inside.mean()))
print("max excursion", int(np.max(np.abs(paths))))
