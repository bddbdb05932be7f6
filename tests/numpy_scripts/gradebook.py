"""A gradebook: weighted averages, letter grades and rankings."""
import numpy as np

students = ["ana", "ben", "cai", "dee", "eli", "fay", "gus", "hal"]
scores = np.array([
    [88, 92, 79, 85], [72, 65, 80, 70], [95, 98, 92, 99], [60, 55, 70, 58],
    [82, 85, 88, 90], [77, 79, 74, 81], [90, 60, 85, 75], [68, 72, 66, 71],
], dtype=float)
weights = np.array([0.2, 0.2, 0.25, 0.35])
final = scores @ weights
print("final:", np.round(final, 2))
cutoffs = np.array([60, 70, 80, 90])
letters = "FDCBA"
grade = [letters[i] for i in np.searchsorted(cutoffs, final, side="right")]
for s, f, g in zip(students, final, grade):
    print(f"{s}: {f:6.2f} {g}")
rank = np.argsort(-final)
print("ranking:", [students[i] for i in rank])
print("class average per exam:", scores.mean(axis=0))
print("best per exam:", [students[i] for i in scores.argmax(axis=0)])
curve = np.clip(scores + (85 - scores.mean(axis=0)), 0, 100)
print("curved mean:", np.round(curve.mean(axis=0), 2))
print("above average on all exams:", [s for s, ok in zip(students, (scores > scores.mean(axis=0)).all(axis=1)) if ok])
print("std per student:", np.round(scores.std(axis=1), 3))
