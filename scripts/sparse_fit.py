"""Fitting for the small linear text classifiers (`text.sparse_model`): sparse binary features, L-BFGS, grouped folds.

Shared by `scripts/train_request_kind.py` and `scripts/train_correction.py`. Why not `learned.linear.LogisticModel`:
it standardises every column and solves a dense d x d Newton system per step; with thousands of sparse n-gram
columns that is minutes per fit on this kind of machine, and standardising a binary column seen twice gives that
rare n-gram the largest weight. So the fit here is L-BFGS on the raw binary features (numpy, sparse products by
`bincount`), where L2 shrinks rare features most. Everything is deterministic: the same data gives the same bytes.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

MIN_COUNT = 2  # a feature seen in fewer training rows than this is dropped


@dataclass
class Matrix:
    """Binary rows as a sparse matrix: `indices[k]` is a column of row `rows[k]`."""

    rows: np.ndarray
    indices: np.ndarray
    n: int
    d: int

    def dot(self, w: np.ndarray) -> np.ndarray:
        return np.bincount(self.rows, weights=w[self.indices], minlength=self.n)

    def tdot(self, g: np.ndarray) -> np.ndarray:
        return np.bincount(self.indices, weights=g[self.rows], minlength=self.d)


def vocabulary(feature_sets: Sequence[Sequence[str]], min_count: int = MIN_COUNT) -> list[str]:
    """Features present in at least `min_count` requests, sorted."""
    counts = Counter(f for fs in feature_sets for f in set(fs))
    return sorted(f for f, c in counts.items() if c >= min_count)


def matrix(feature_sets: Sequence[Sequence[str]], vocab: Sequence[str]) -> Matrix:
    index = {f: i for i, f in enumerate(vocab)}
    rows, cols = [], []
    for i, fs in enumerate(feature_sets):
        for f in sorted(set(fs)):
            j = index.get(f)
            if j is not None:
                rows.append(i)
                cols.append(j)
    return Matrix(np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64), len(feature_sets), len(vocab))


def fit_head(x: Matrix, y: np.ndarray, weight: np.ndarray, l2: float, *,
             max_iter: int = 400) -> tuple[np.ndarray, float]:
    """Weights and bias minimising the weighted mean log loss + l2/2 * |w|^2 (bias free), by L-BFGS."""
    sw = weight / weight.sum()

    def loss_grad(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[:-1], theta[-1]
        z = x.dot(w) + b
        loss = float(sw @ (np.logaddexp(0.0, z) - y * z)) + 0.5 * l2 * float(w @ w)
        r = sw * (sigmoid(z) - y)
        return loss, np.concatenate([x.tdot(r) + l2 * w, [r.sum()]])

    theta = _lbfgs(loss_grad, np.zeros(x.d + 1), max_iter=max_iter)
    return theta[:-1], float(theta[-1])


def _lbfgs(fg: Callable[[np.ndarray], tuple[float, np.ndarray]], x: np.ndarray, *, memory: int = 10,
           max_iter: int = 400, tol: float = 1e-7) -> np.ndarray:
    """Minimise a smooth convex function (limited-memory BFGS, Armijo backtracking). Deterministic."""
    f, g = fg(x)
    pairs: list[tuple[np.ndarray, np.ndarray, float]] = []
    for _ in range(max_iter):
        if float(np.max(np.abs(g))) < tol:
            break
        q = g.copy()
        alphas = []
        for s, yv, rho in reversed(pairs):
            a = rho * float(s @ q)
            q -= a * yv
            alphas.append(a)
        if pairs:
            s, yv, _ = pairs[-1]
            q *= float(s @ yv) / float(yv @ yv)
        else:
            q /= max(1.0, float(np.linalg.norm(g)))
        for (s, yv, rho), a in zip(pairs, reversed(alphas), strict=True):
            q += s * (a - rho * float(yv @ q))
        direction = -q
        slope = float(g @ direction)
        if slope >= 0:
            direction, slope, pairs = -g, -float(g @ g), []
        t = 1.0
        while True:
            candidate = x + t * direction
            f_new, g_new = fg(candidate)
            if f_new <= f + 1e-4 * t * slope or t < 1e-12:
                break
            t *= 0.5
        s, yv = candidate - x, g_new - g
        if float(s @ yv) > 1e-12:
            pairs = [*pairs[-(memory - 1):], (s, yv, 1.0 / float(s @ yv))]
        previous, x, f, g = f, candidate, f_new, g_new
        if previous - f <= 1e-12 * max(1.0, abs(f)):
            break
    return x


def sigmoid(z: np.ndarray) -> np.ndarray:
    out: np.ndarray = 1.0 / (1.0 + np.exp(-np.clip(z, -35.0, 35.0)))
    return out


def folds_of(groups: Sequence[str], k: int, seed: int) -> list[int]:
    """A fold per row (`groups[i]` is row i's group): whole groups go to the fold holding least weight so far,
    largest group first (ties in a seeded random order), so the folds are balanced and no group is split."""
    sizes = Counter(groups)
    order = sorted(sizes)
    random.Random(seed).shuffle(order)
    order.sort(key=lambda s: -sizes[s])  # stable: equal sizes keep the shuffled order
    load = [0] * k
    fold_of: dict[str, int] = {}
    for source in order:
        i = min(range(k), key=lambda j: (load[j], j))
        fold_of[source] = i
        load[i] += sizes[source]
    return [fold_of[g] for g in groups]


@dataclass
class Confusion:
    """A binary detector's counts, with precision, recall and F1 (the trainers and the benches share it)."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    @classmethod
    def of(cls, predicted: Sequence[bool], actual: Sequence[bool]) -> Confusion:
        c = cls()
        for p, a in zip(predicted, actual, strict=True):
            c.add(bool(p), bool(a))
        return c

    def add(self, predicted: bool, actual: bool) -> None:
        if predicted and actual:
            self.tp += 1
        elif predicted:
            self.fp += 1
        elif actual:
            self.fn += 1
        else:
            self.tn += 1

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def log_loss(p: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return float(w @ -(y * np.log(p) + (1 - y) * np.log(1 - p)) / w.sum())
