"""Logistic regression trained by batch gradient descent."""
import numpy as np

n = 200
t = np.arange(n)
X = np.column_stack([np.sin(t * 0.31) * 2, np.cos(t * 0.17) * 2])
y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * np.sin(t * 2.9) > 0).astype(float)
Xb = np.hstack([X, np.ones((n, 1))])
w = np.zeros(3)


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


for epoch in range(300):
    p = sigmoid(Xb @ w)
    grad = Xb.T @ (p - y) / n
    w -= 0.5 * grad
    if epoch % 100 == 0:
        loss = -np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))
        print(f"epoch {epoch:3d} loss {loss:.6f}")
p = sigmoid(Xb @ w)
pred = p > 0.5
print("weights:", np.round(w, 5))
print("accuracy:", (pred == y).mean())
tp = np.sum(pred & (y == 1)); fp = np.sum(pred & (y == 0)); fn = np.sum(~pred & (y == 1))
print(f"precision={tp / (tp + fp):.4f} recall={tp / (tp + fn):.4f}")
print("confusion:\n", np.array([[np.sum(~pred & (y == 0)), fp], [fn, tp]]))
