"""Image filtering: box blur and Sobel edges on a synthetic image, thresholding, a histogram."""
import clnp as np

h, w = 256, 256
y, x = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
img = ((x - 128) ** 2 + (y - 128) ** 2 < 60 ** 2).astype(np.float32)
img = img + 0.1 * np.sin(x / 7.0) * np.cos(y / 11.0)

p = np.pad(img, 1, mode="edge")
blur = sum(p[i:i + h, j:j + w] for i in range(3) for j in range(3)) / 9.0
gx = (p[1:h + 1, 2:] - p[1:h + 1, :w]) * 2 + (p[:h, 2:] - p[:h, :w]) + (p[2:, 2:] - p[2:, :w])
gy = (p[2:, 1:w + 1] - p[:h, 1:w + 1]) * 2 + (p[2:, :w] - p[:h, :w]) + (p[2:, 2:] - p[:h, 2:])
edges = np.sqrt(gx ** 2 + gy ** 2)
mask = edges > 0.5 * edges.max()
print("edge pixels", int(mask.sum()))
print("blur range %.4f %.4f" % (float(blur.min()), float(blur.max())))
hist, bins = np.histogram(blur, bins=16, range=(0.0, 1.2))
print("histogram", hist.tolist())
norm = (img - img.min()) / (img.max() - img.min())
print("mean brightness %.4f" % float(norm.mean()))
print("clipped", float(np.clip(img, 0.2, 0.8).sum()))
