"""Two ordinary NumPy programs, written for NumPy, run unchanged with ``import clnp as np``.

Each program takes the array module as its ``np`` argument (the same source runs with
``numpy`` and with ``clnp``) and the results are compared. Input data comes from NumPy's
random generator, as a NumPy user's data would (files, simulators, ...).
"""
from __future__ import annotations

import numpy
import pytest

import clnp


# ------------------------------------------------------------------ program 1: k-means
def kmeans(np, points, k, n_iter=100, tol=1e-10):
    """Lloyd's k-means on standardised features; returns centres (in the original units),
    labels, inertia, cluster sizes and the number of iterations used."""
    X = np.asarray(points, dtype=np.float64)
    mu, sigma = X.mean(axis=0), X.std(axis=0)
    Z = (X - mu) / sigma
    centers = Z[:k].copy()
    for it in range(n_iter):
        d2 = ((Z[:, np.newaxis, :] - centers[np.newaxis, :, :]) ** 2).sum(axis=2)
        labels = np.argmin(d2, axis=1)
        new_centers = []
        for j in range(k):
            members = Z[labels == j]
            new_centers.append(members.mean(axis=0) if len(members) else centers[j])
        new_centers = np.stack(new_centers)
        shift = np.sqrt(((new_centers - centers) ** 2).sum())
        centers = new_centers
        if shift < tol:
            break
    d2 = ((Z[:, np.newaxis, :] - centers[np.newaxis, :, :]) ** 2).sum(axis=2)
    labels = np.argmin(d2, axis=1)
    inertia = float(np.min(d2, axis=1).sum())
    sizes = np.bincount(labels, minlength=k)
    return centers * sigma + mu, labels, inertia, sizes, it


def blobs(seed=0, n=300):
    rng = numpy.random.default_rng(seed)
    true_centers = numpy.array([[0.0, 0.0, 0.0], [6.0, 5.0, -4.0], [-5.0, 7.0, 3.0]])
    which = rng.integers(0, 3, n)
    return true_centers[which] + rng.normal(scale=1.0, size=(n, 3)), which


def test_kmeans_program(device):
    points, _ = blobs()
    ref = kmeans(numpy, points, 3)
    prev = clnp.default_device()
    clnp.set_default_device(device)
    try:
        got = kmeans(clnp, points, 3)
    finally:
        clnp.set_default_device(prev)
    centers, labels, inertia, sizes, iters = got
    assert isinstance(centers, clnp.ndarray) and centers.device is device
    numpy.testing.assert_allclose(centers.to_numpy(), ref[0], rtol=1e-10)
    numpy.testing.assert_array_equal(labels.to_numpy(), ref[1])
    assert inertia == pytest.approx(ref[2], rel=1e-10)
    numpy.testing.assert_array_equal(sizes.to_numpy(), ref[3])
    assert iters == ref[4]


# ------------------------------------------------------------------ program 2: image pipeline
def process_image(np, raw):
    """Contrast stretch, blur, gradients, histogram equalisation, 8-bit quantisation with a
    gamma lookup table, and a few statistics of the strongest edges."""
    img = np.asarray(raw, dtype=np.float64)
    lo, hi = np.percentile(img, [2, 98])
    img = np.clip((img - lo) / (hi - lo), 0.0, 1.0)

    h, w = img.shape
    p = np.pad(img, 1, mode="edge")
    blur = sum(p[i:i + h, j:j + w] for i in range(3) for j in range(3)) / 9.0

    gx = np.diff(blur, axis=1, append=blur[:, -1:])
    gy = np.diff(blur, axis=0, append=blur[-1:, :])
    mag = np.hypot(gx, gy)

    hist, edges = np.histogram(blur, bins=32, range=(0.0, 1.0))
    cdf = np.cumsum(hist).astype(np.float64)
    cdf /= cdf[-1]
    eq = np.interp(blur.ravel(), edges[1:], cdf).reshape(blur.shape)

    q = np.round(eq * 255).astype(np.uint8)
    lut = (np.linspace(0.0, 1.0, 256) ** 0.8 * 255).astype(np.uint8)
    out = lut[q]

    strong = mag > np.percentile(mag, 90)
    ys, xs = np.nonzero(strong)
    centroid = (float(ys.mean()), float(xs.mean()))
    row_profile = np.where(strong, mag, 0.0).max(axis=1)
    stats = {"median": float(np.median(out)), "mean": float(out.mean()),
             "std": float(out.std()), "edge_pixels": int(np.count_nonzero(strong)),
             "dark_fraction": float(np.mean(out < 64))}
    return out, mag, strong, hist, row_profile, centroid, stats


def synthetic_image(seed=1, shape=(48, 64)):
    rng = numpy.random.default_rng(seed)
    yy, xx = numpy.mgrid[0:shape[0], 0:shape[1]]
    img = 40 + 0.8 * xx + 30 * ((yy - 20) ** 2 + (xx - 30) ** 2 < 150)
    return img + rng.normal(scale=4.0, size=shape)


def test_image_pipeline_program(device):
    raw = synthetic_image()
    ref = process_image(numpy, raw)
    prev = clnp.default_device()
    clnp.set_default_device(device)
    try:
        got = process_image(clnp, raw)
    finally:
        clnp.set_default_device(prev)
    out, mag, strong, hist, profile, centroid, stats = got
    assert isinstance(out, clnp.ndarray) and out.dtype == numpy.uint8
    numpy.testing.assert_allclose(mag.to_numpy(), ref[1], rtol=1e-12, atol=1e-15)
    numpy.testing.assert_array_equal(hist.to_numpy(), ref[3])
    numpy.testing.assert_array_equal(strong.to_numpy(), ref[2])
    numpy.testing.assert_array_equal(out.to_numpy(), ref[0])
    numpy.testing.assert_allclose(profile.to_numpy(), ref[4], rtol=1e-12)
    assert centroid == pytest.approx(ref[5], rel=1e-12)
    assert stats.keys() == ref[6].keys()
    for key in stats:
        assert stats[key] == pytest.approx(ref[6][key], rel=1e-12), key
