"""Box blur, Sobel edges and thresholding of a small synthetic image with slicing."""
import numpy as np

h, w = 24, 32
yy = np.arange(h).reshape(-1, 1)
xx = np.arange(w).reshape(1, -1)
img = 50.0 + 2.0 * xx + 80.0 * ((yy - 12) ** 2 + (xx - 16) ** 2 < 40)
img = img + 3.0 * np.sin(xx * 1.3) * np.cos(yy * 0.7)

pad = np.pad(img, 1, mode="edge")
blur = np.zeros_like(img)
for dy in range(3):
    for dx in range(3):
        blur += pad[dy:dy + h, dx:dx + w]
blur /= 9

p = np.pad(blur, 1, mode="reflect")
gx = (p[:-2, 2:] + 2 * p[1:-1, 2:] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[1:-1, :-2] + p[2:, :-2])
gy = (p[2:, :-2] + 2 * p[2:, 1:-1] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[:-2, 1:-1] + p[:-2, 2:])
mag = np.hypot(gx, gy)
edges = mag > 0.5 * mag.max()
print("blur range:", round(float(blur.min()), 4), round(float(blur.max()), 4))
print("edge pixels:", int(edges.sum()))
rows, cols = np.nonzero(edges)
print("edge bbox:", rows.min(), rows.max(), cols.min(), cols.max())
print("mean of bright region:", f"{img[img > 150].mean():.4f}")
print("row profile:", np.round(blur[12, ::4], 2))
out = np.clip(blur, 0, 255).astype(np.uint8)
print(out[10:14, 12:20])
