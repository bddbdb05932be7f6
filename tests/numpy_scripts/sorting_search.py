"""Sorting, ranking and binary search."""
import numpy as np

prices = np.array([3.5, 1.25, 9.0, 4.75, 2.5, 7.25, 6.0, 0.5, 8.5, 5.5])
names = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]
order = np.argsort(prices)
print("cheapest first:", [names[i] for i in order])
print("sorted:", np.sort(prices))
print("descending:", np.sort(prices)[::-1])
s = np.sort(prices)
budget = np.array([0.0, 2.5, 5.0, 10.0])
print("items under budget:", np.searchsorted(s, budget, side="right"))
print("insert positions (left):", np.searchsorted(s, [2.5, 6.1]))
m = prices.reshape(2, 5)
print("row-wise sort:\n", np.sort(m, axis=1))
print("column argsort:\n", np.argsort(m, axis=0))
print("median via sort:", (s[4] + s[5]) / 2, "==", np.median(prices))
k = 3
print(f"{k+1}th smallest:", np.sort(prices)[k])
a = prices.copy()
a.sort()
print("in-place sort equal:", np.array_equal(a, s))
print("argmin/argmax:", prices.argmin(), prices.argmax())
