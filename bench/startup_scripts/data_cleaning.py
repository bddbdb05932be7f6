"""Data cleaning: sentinel values to NaN, masks, unique categories, argsort ranking."""
import clnp as np

rng = np.random.default_rng(7)
n = 5000
values = rng.normal(10.0, 3.0, n)
values[::37] = -999.0                  # sentinel for missing
cats = rng.integers(0, 6, n)
values = np.where(values == -999.0, np.nan, values)
ok = ~np.isnan(values)
print("missing", int((~ok).sum()))
print("nanmean %.4f" % float(np.nanmean(values)))
clean = values[ok]
ccats = cats[ok]
lo, hi = np.percentile(clean, [1, 99]).tolist()
keep = (clean > lo) & (clean < hi)
clean, ccats = clean[keep], ccats[keep]
u, counts = np.unique(ccats, return_counts=True)
print("categories", u.tolist(), counts.tolist())
order = np.argsort(clean)
print("smallest three", clean[order[:3]].tolist())
ranks = np.empty_like(order)
ranks[order] = np.arange(order.shape[0])
print("rank of first", int(ranks[0]))
filled = np.nan_to_num(values, nan=float(np.nanmedian(values)))
print("filled mean %.4f" % float(filled.mean()))
print("sorted unique values", np.unique(np.round(clean[:20])).tolist())
