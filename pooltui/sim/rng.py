"""Per-session random streams: counter-based (splitmix64), so a stream is two integers.

A stream is keyed by (seed, class, index) and advanced by a counter. Its state is plain data
(checkpoints copy it for free) and one session's draws never depend on another's timing.

Owns the generator only; a session's counter lives in its state.
"""

from __future__ import annotations

import hashlib
import math

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_TWO53 = 2.0**-53


def stream_key(seed: int, cls: str, index: int) -> int:
    digest = hashlib.blake2b(f"{seed}\x00{cls}\x00{index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def uniform01(key: int, counter: int) -> float:
    """The counter-th number of stream `key`, uniform in [0, 1)."""
    return (_mix((key + (counter + 1) * _GOLDEN) & _MASK) >> 11) * _TWO53


class Stream:
    """Draws from one stream. `counter` is the only state; the caller stores it back."""

    __slots__ = ("counter", "key")

    def __init__(self, key: int, counter: int = 0) -> None:
        self.key = key
        self.counter = counter

    def u(self) -> float:
        x = uniform01(self.key, self.counter)
        self.counter += 1
        return x

    def draw(self, dist: str, args: list[int | float]) -> int | float:
        if dist == "uniform":
            for bound in args[:2]:
                if not math.isfinite(bound):  # an integer between them: there is none to draw
                    raise ValueError(f"bound {bound} is not finite")
            lo, hi = math.ceil(args[0]), math.floor(args[1])
            if hi < lo:
                raise ValueError(f"empty range {args[0]}..{args[1]}")
            return lo + min(int(self.u() * (hi - lo + 1)), hi - lo)
        if dist == "real":
            return args[0] + (args[1] - args[0]) * self.u()
        if dist == "exponential":
            if args[0] <= 0:
                raise ValueError(f"mean {args[0]} is not positive")
            return -args[0] * math.log(1.0 - self.u())
        if dist == "normal":
            return args[0] + args[1] * self._gauss()
        if dist == "lognormal":
            try:
                return math.exp(args[0] + args[1] * self._gauss())
            except OverflowError:  # past the largest float: inf, as arithmetic's `1e308 * 10`
                return math.inf
        if dist == "bernoulli":
            return 1 if self.u() < args[0] else 0
        if dist == "poisson":
            return self._poisson(args[0])
        if dist == "choice":
            return args[min(int(self.u() * len(args)), len(args) - 1)]
        raise ValueError(f"unknown distribution {dist}")

    def _gauss(self) -> float:
        # Box-Muller, one of the pair: two uniforms per draw keeps the stream simple.
        u1 = 1.0 - self.u()
        u2 = self.u()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)

    def _poisson(self, lam: float) -> int:
        if lam < 0:
            raise ValueError(f"lambda {lam} is negative")
        if not math.isfinite(lam):
            raise ValueError(f"lambda {lam} is not finite")
        if lam < 30:  # Knuth: multiply uniforms until below e^-lambda
            limit, k, p = math.exp(-lam), 0, self.u()
            while p > limit:
                k += 1
                p *= self.u()
            return k
        # Hörmann's PTRS transformed rejection for large lambda.
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
        v_r = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = self.u() - 0.5
            v = self.u()
            us = 0.5 - abs(u)
            k = math.floor((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= v_r:
                return int(k)
            if k < 0 or (us < 0.013 and v > us):
                continue
            if math.log(v) + math.log(inv_alpha) - math.log(a / (us * us) + b) <= (
                -lam + k * loglam - math.lgamma(k + 1)
            ):
                return int(k)
