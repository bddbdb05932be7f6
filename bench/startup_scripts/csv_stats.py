"""Statistics of a CSV table: column means, spreads, correlations, a grouped summary."""
import csv
import io

import clnp as np

# a small table as it would come from a file: id, group, height, weight, age
lines = ["id,group,height,weight,age"]
for i in range(500):
    lines.append(f"{i},{i % 4},{150 + (i * 37) % 50},{50 + (i * 53) % 40},{18 + (i * 7) % 60}")
rows = list(csv.reader(io.StringIO("\n".join(lines))))[1:]
table = np.asarray([[float(v) for v in r] for r in rows])

group = table[:, 1].astype(np.int64)
data = table[:, 2:]
mean = data.mean(axis=0)
std = data.std(axis=0)
z = (data - mean) / std
print("mean", mean.tolist())
print("std", std.tolist())
print("min/max", data.min(axis=0).tolist(), data.max(axis=0).tolist())
print("median height", float(np.median(data[:, 0])))
print("corr", np.corrcoef(data.T).tolist())
bmi = data[:, 1] / (data[:, 0] / 100) ** 2
for g in range(4):
    sel = group == g
    print("group", g, "n", int(sel.sum()), "mean bmi %.3f" % float(bmi[sel].mean()))
print("outliers", int((np.abs(z) > 1.5).any(axis=1).sum()))
print("percentiles", np.percentile(data[:, 2], [25, 50, 75]).tolist())
