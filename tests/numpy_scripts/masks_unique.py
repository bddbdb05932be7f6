"""Labels, counts and rankings with unique, masks, where and argsort."""
import numpy as np

codes = (np.arange(60) * 7 + 3) % 11 % 5
scores = np.round(50 + 40 * np.sin(np.arange(60) * 0.77), 1)
labels, counts = np.unique(codes, return_counts=True)
print("labels:", labels, "counts:", counts)
for lab in labels:
    sel = scores[codes == lab]
    print(f"group {lab}: n={sel.size:2d} mean={sel.mean():6.2f} best={sel.max():5.1f}")
uniq, inverse = np.unique(codes, return_inverse=True)
print("inverse reconstructs:", np.array_equal(uniq[inverse], codes))
passed = np.where(scores >= 60, 1, 0)
print("passed:", passed.sum(), "of", passed.size)
order = np.argsort(-scores, kind="stable")
print("top 5 indices:", order[:5], "scores:", scores[order[:5]])
ranks = np.empty_like(order)
ranks[order] = np.arange(order.size)
print("rank of first 8:", ranks[:8])
scores[(scores < 20) | (scores > 85)] = np.nan
print("nan count:", np.isnan(scores).sum(), "nanmean:", round(float(np.nanmean(scores)), 4))
print("isin:", np.isin([0, 4, 7], labels))
