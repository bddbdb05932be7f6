"""FFT low-pass: a noisy two-tone signal, filtered in the frequency domain, compared."""
import clnp as np

n = 4096
fs = 1000.0
t = np.arange(n) / fs
clean = np.sin(2 * np.pi * 5 * t) + 0.5 * np.sin(2 * np.pi * 12 * t)
rng = np.random.default_rng(1)
noisy = clean + 0.8 * rng.standard_normal(n)
spec = np.fft.rfft(noisy)
freq = np.fft.rfftfreq(n, d=1 / fs)
spec[freq > 20] = 0
filtered = np.fft.irfft(spec, n=n)
print("rms error before %.4f after %.4f" % (float(np.sqrt(np.mean((noisy - clean) ** 2))),
                                            float(np.sqrt(np.mean((filtered - clean) ** 2)))))
power = np.abs(np.fft.fft(clean)) ** 2
peaks = np.argsort(power[: n // 2])[-2:]
print("peak frequencies", sorted((peaks * fs / n).tolist()))
shifted = np.fft.fftshift(np.fft.fftfreq(8))
print("fftshift", shifted.tolist())
print("energy kept %.4f" % float(np.sum(filtered ** 2) / np.sum(noisy ** 2)))
