"""Conway's game of life with np.roll."""
import numpy as np

board = np.zeros((12, 12), dtype=int)
board[1, 2] = board[2, 3] = board[3, 1] = board[3, 2] = board[3, 3] = 1   # glider
board[8, 7:10] = 1                                                          # blinker


def step(b):
    n = sum(np.roll(np.roll(b, dy, axis=0), dx, axis=1)
            for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dy, dx) != (0, 0))
    return ((n == 3) | ((b == 1) & (n == 2))).astype(int)


for gen in range(8):
    board = step(board)
    print(f"gen {gen + 1}: alive={board.sum()} rows={np.flatnonzero(board.any(axis=1))}")
for row in board[:6]:
    print("".join("#" if v else "." for v in row))
print(board.nonzero()[1][:6])
