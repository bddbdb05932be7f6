"""Find the frequencies of a sampled signal with the real FFT, then filter it."""
import numpy as np

fs = 256.0
t = np.arange(512) / fs
sig = 1.0 * np.sin(2 * np.pi * 12 * t) + 0.5 * np.sin(2 * np.pi * 40 * t) + 0.2 * np.cos(2 * np.pi * 90 * t)
spec = np.fft.rfft(sig)
freqs = np.fft.rfftfreq(sig.size, d=1 / fs)
power = np.abs(spec) ** 2 / sig.size
top = np.argsort(power)[::-1][:3]
print("peak frequencies:", np.sort(freqs[top]))
print("amplitudes:", np.round(2 * np.abs(spec[np.sort(top)]) / sig.size, 4))
lowpass = spec.copy()
lowpass[freqs > 30] = 0
smooth = np.fft.irfft(lowpass, n=sig.size)
print("residual after low-pass:", round(float(np.abs(smooth - np.sin(2 * np.pi * 12 * t)).max()), 6))
full = np.fft.fft(sig)
print("Parseval:", np.allclose(np.sum(sig ** 2), np.sum(np.abs(full) ** 2) / sig.size))
print("shifted zero bin:", np.fft.fftshift(np.fft.fftfreq(8, d=0.5)))
