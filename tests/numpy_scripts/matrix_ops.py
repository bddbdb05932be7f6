"""Everyday matrix algebra."""
import numpy as np

A = np.array([[4.0, 1, 2], [1, 5, 3], [2, 3, 6]])
b = np.array([1.0, 2, 3])
print("A @ b:", A @ b)
print("det:", round(float(np.linalg.det(A)), 8))
Ainv = np.linalg.inv(A)
print("inverse check:", np.allclose(A @ Ainv, np.eye(3)))
x = np.linalg.solve(A, b)
print("solve:", np.round(x, 8))
w, V = np.linalg.eigh(A)
print("eigenvalues:", np.round(w, 8))
print("reconstruct:", np.allclose(V @ np.diag(w) @ V.T, A))
print("trace = sum eig:", np.isclose(np.trace(A), w.sum()))
print("norms:", round(float(np.linalg.norm(A)), 8), round(float(np.linalg.norm(A, 2)), 8),
      round(float(np.linalg.norm(b, 1)), 8))
L = np.linalg.cholesky(A)
print("cholesky lower:", np.allclose(L, np.tril(L)), np.allclose(L @ L.T, A))
print("matrix power:\n", np.linalg.matrix_power(A.astype(int), 3))
print("outer:\n", np.outer(b, b[:2]))
print("kron-like via einsum:", np.einsum("ij,j->i", A, b))
print("rank:", np.linalg.matrix_rank(np.array([[1.0, 2], [2, 4]])))
