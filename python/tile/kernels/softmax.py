"""Row softmax, from the puzzles: Y[r, :] = softmax(X[r, :]) in fp32.

All four versions take (X, Y, x_row_stride, y_row_stride, n_rows, n_cols);
strides count elements and columns are contiguous.  v1-v3 run one program
per row, grid (n_rows,); v4 runs grid (cdiv(n_rows, BLOCK_M),).
"""

import tile
import tile.language as tl


@tile.jit(launch=tile.Launch(grid="n_rows"))
def softmax_v1(X, Y, x_row_stride, y_row_stride, n_rows, n_cols,
               BLOCK_N: tl.constexpr):
    """The whole row in one block: needs BLOCK_N >= n_cols."""
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(X + row * x_row_stride + cols, mask=mask, other=-float("inf"))
    numerator = tl.exp(x - tl.max(x, axis=0))
    denominator = tl.sum(numerator, axis=0)
    tl.store(Y + row * y_row_stride + cols, numerator / denominator, mask=mask)


@tile.jit(launch=tile.Launch(grid="n_rows"))
def softmax_v2(X, Y, x_row_stride, y_row_stride, n_rows, n_cols,
               BLOCK_N: tl.constexpr):
    """Three passes over the row in blocks: max, sum of exp, normalise."""
    row = tl.program_id(0).to(tl.int64)
    x_row = X + row * x_row_stride
    y_row = Y + row * y_row_stride
    row_max = -float("inf")
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf"))
        row_max = tl.maximum(row_max, tl.max(x, axis=0))
    row_sum = 0.0
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf"))
        row_sum += tl.sum(tl.exp(x - row_max), axis=0)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=-float("inf"))
        tl.store(y_row + cols, tl.exp(x - row_max) / row_sum, mask=mask)


@tile.jit
def _finite_max(m):
    """The running max, with -inf (nothing seen yet) replaced by 0 so that
    exp(x - m) and exp(m_old - m) stay NaN-free when every x so far is -inf."""
    return tl.where(m == -float("inf"), 0.0, m)


@tile.jit(launch=tile.Launch(grid="n_rows"))
def softmax_v3(X, Y, x_row_stride, y_row_stride, n_rows, n_cols,
               BLOCK_N: tl.constexpr):
    """Online softmax: the max and the sum in one pass, then normalise."""
    row = tl.program_id(0).to(tl.int64)
    x_row = X + row * x_row_stride
    y_row = Y + row * y_row_stride
    row_max = -float("inf")
    row_sum = 0.0
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf"))
        new_max = tl.maximum(row_max, tl.max(x, axis=0))
        shift = _finite_max(new_max)
        row_sum = row_sum * tl.exp(row_max - shift) + tl.sum(tl.exp(x - shift), axis=0)
        row_max = new_max
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=-float("inf"))
        tl.store(y_row + cols, tl.exp(x - row_max) / row_sum, mask=mask)


@tile.jit(launch=tile.Launch(grid="cdiv(n_rows, BLOCK_M)"))
def softmax_v4(X, Y, x_row_stride, y_row_stride, n_rows, n_cols,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """2-D blocking: BLOCK_M rows per program, online over column blocks."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < n_rows
    x_rows = X + rows.to(tl.int64)[:, None] * x_row_stride
    y_rows = Y + rows.to(tl.int64)[:, None] * y_row_stride
    row_max = tl.full([BLOCK_M], -float("inf"), tl.float32)
    row_sum = tl.zeros([BLOCK_M], tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols[None, :] < n_cols)
        x = tl.load(x_rows + cols[None, :], mask=mask, other=-float("inf"))
        new_max = tl.maximum(row_max, tl.max(x, axis=1))
        shift = _finite_max(new_max)
        row_sum = row_sum * tl.exp(row_max - shift) + \
            tl.sum(tl.exp(x - shift[:, None]), axis=1)
        row_max = new_max
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols[None, :] < n_cols)
        x = tl.load(x_rows + cols[None, :], mask=mask, other=-float("inf"))
        y = tl.exp(x - row_max[:, None]) / row_sum[:, None]
        tl.store(y_rows + cols[None, :], y, mask=mask)
