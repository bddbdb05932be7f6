"""Daily readings: weekly resampling, rolling statistics and anomalies."""
import numpy as np

days = np.arange(84)
temp = 15 + 8 * np.sin(2 * np.pi * days / 84) + 2 * np.sin(days * 1.3)
weekly = temp.reshape(-1, 7)
print("weekly mean:", np.round(weekly.mean(axis=1), 3))
print("weekly range:", np.round(weekly.max(axis=1) - weekly.min(axis=1), 3))
win = 7
c = np.cumsum(np.concatenate([[0.0], temp]))
roll = (c[win:] - c[:-win]) / win
print("rolling mean (first 5):", np.round(roll[:5], 4))
anom = temp - np.concatenate([np.full(win - 1, np.nan), roll])
print("anomaly std:", round(float(np.nanstd(anom)), 5))
hot = np.flatnonzero(temp > 22)
print("hot days:", hot)
runs = np.split(hot, np.flatnonzero(np.diff(hot) != 1) + 1)
print("longest hot spell:", max(len(r) for r in runs))
print("warmest week:", weekly.mean(axis=1).argmax() + 1)
print("day-to-day change > 3:", int((np.abs(np.diff(temp)) > 3).sum()))
