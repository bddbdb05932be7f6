"""The six operations of issue #27's first-minute trial: linspace, sin, sum, reshape + mean,
sort and a dot product."""
import clnp as np

x = np.linspace(0, 1, 100_000, dtype=np.float32)
y = np.sin(x)
print("sum %.4f" % float(np.sum(y)))
print("column means %.5f" % float(y.reshape(100, 1000).mean(axis=0)[7]))
print("sorted head %.6f" % float(np.sort(y)[3]))
print("dot %.3f" % float(np.dot(x, y)))
