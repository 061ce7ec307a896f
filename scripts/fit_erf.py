#!/usr/bin/env python3
"""Fits the rational approximation CpuAcc's erf kernel uses (src/backends/cpuacc/CpuAccKernels.cpp):

    erf(x) ~= x * P(x^2) / Q(x^2)   for |x| <= CLAMP, and +-1 beyond (erf(3.92) rounds to 1.0f),

with P of degree 6 and Q of degree 5 (Q(0) = 1), minimizing the relative error by iterated
weighted linear least squares (Sanathanan-Koerner). Prints the float32 coefficients and the
largest relative error seen in float32 arithmetic. Run with Debian's python3 (numpy):

    /usr/bin/python3 scripts/fit_erf.py
"""
import math

import numpy as np

CLAMP = 3.92
DP, DQ = 6, 5


def fit():
    x = np.linspace(1e-4, CLAMP, 20000)
    # denser near 0 and near the clamp
    x = np.unique(np.concatenate([x, np.geomspace(1e-6, 1.0, 4000)]))
    t = x * x
    r = np.array([math.erf(v) / v for v in x])
    q_prev = np.ones_like(t)
    for _ in range(30):
        w = 1.0 / (r * q_prev)
        # P(t) - r * (Q(t) - 1) = r, unknowns p0..pDP, q1..qDQ
        cols = [t ** i for i in range(DP + 1)] + [-r * t ** i for i in range(1, DQ + 1)]
        a = np.stack(cols, axis=1) * w[:, None]
        sol, *_ = np.linalg.lstsq(a, r * w, rcond=None)
        p, q = sol[: DP + 1], np.concatenate([[1.0], sol[DP + 1 :]])
        q_prev = np.polyval(q[::-1], t)
    return p, q


def eval_f32(p, q, x):
    x = np.float32(x)
    xc = np.clip(x, np.float32(-CLAMP), np.float32(CLAMP)).astype(np.float32)
    t = (xc * xc).astype(np.float32)
    pv = np.full_like(t, p[-1])
    for c in p[-2::-1]:
        pv = (pv * t + c).astype(np.float32)
    qv = np.full_like(t, q[-1])
    for c in q[-2::-1]:
        qv = (qv * t + c).astype(np.float32)
    return (xc * (pv / qv)).astype(np.float32)


def main():
    p, q = fit()
    p32, q32 = p.astype(np.float32), q.astype(np.float32)
    xs = np.linspace(-6, 6, 400001).astype(np.float32)
    got = eval_f32(p32, q32, xs).astype(np.float64)
    want = np.array([math.erf(float(v)) for v in xs])
    nz = np.abs(want) > 0
    rel = np.max(np.abs(got[nz] - want[nz]) / np.abs(want[nz]))
    ab = np.max(np.abs(got - want))
    print("// P, lowest degree first")
    print(", ".join(f"{float(c):.9e}f" for c in p32))
    print("// Q, lowest degree first")
    print(", ".join(f"{float(c):.9e}f" for c in q32))
    print(f"max relative error {rel:.3e}, max absolute error {ab:.3e} (float32 evaluation)")


if __name__ == "__main__":
    main()
