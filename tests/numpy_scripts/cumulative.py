"""Running totals, moving averages and compound growth."""
import numpy as np

sales = np.array([12, 15, 9, 20, 25, 18, 30, 28, 22, 35, 40, 38], dtype=float)
print("running total:", np.cumsum(sales))
print("running mean:", np.round(np.cumsum(sales) / np.arange(1, sales.size + 1), 3))
c = np.concatenate([[0.0], np.cumsum(sales)])
window = 3
mov = (c[window:] - c[:-window]) / window
print("3-month moving average:", np.round(mov, 3))
print("month-on-month change:", np.diff(sales))
print("growth %:", np.round(100 * np.diff(sales) / sales[:-1], 1))
rates = np.array([0.02, 0.03, -0.01, 0.04, 0.025])
print("compound factor:", np.round(np.cumprod(1 + rates), 6))
print("running max:", np.maximum.accumulate(sales))
print("drawdown:", np.maximum.accumulate(sales) - sales)
quarters = sales.reshape(4, 3)
print("quarter totals:", quarters.sum(axis=1), "best quarter:", quarters.sum(axis=1).argmax() + 1)
print("cumsum by column:\n", quarters.cumsum(axis=0))
