"""A random generator with the noise switched off, for the soundness search (:mod:`dpconvex.audit.soundness`).

:class:`NoiselessGenerator` returns zero for every Gaussian and Laplace draw but draws batches,
permutations and stopping times for real and logs them, so that an oracle knows which steps of a
run touched the differing record.
"""

from __future__ import annotations

import numpy as np

__all__ = ["NoiselessGenerator"]


class NoiselessGenerator(np.random.Generator):
    """A PCG64 generator whose Gaussian and Laplace draws are all zero; other draws are real and logged.

    ``log`` lists ``(method, result)`` for every ``permutation``, ``choice``, ``integers`` and
    ``geometric`` call, in order: the batches (Poisson: as geometric gaps), permutations and
    stopping times of the run.

    Parameters
    ----------
    seed : int
        Seed of the PCG64 bit generator.
    """

    def __init__(self, seed: int) -> None:
        super().__init__(np.random.PCG64(seed))
        self.log: list[tuple[str, object]] = []

    @staticmethod
    def _zeros(loc, size):
        return np.zeros(size) + loc if size is not None else float(np.asarray(loc))

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        """Zeros of the requested size instead of N(0, 1) draws (not logged)."""
        return self._zeros(0.0, size)

    def normal(self, loc=0.0, scale=1.0, size=None):
        """``loc`` in the requested size instead of N(loc, scale²) draws (not logged)."""
        return self._zeros(loc, size)

    def laplace(self, loc=0.0, scale=1.0, size=None):
        """``loc`` in the requested size instead of Laplace(loc, scale) draws (not logged)."""
        return self._zeros(loc, size)

    def _logged(self, name: str, result):
        self.log.append((name, np.array(result, copy=True)))
        return result

    def permutation(self, x, axis=0):
        """numpy's ``Generator.permutation``, logged."""
        return self._logged("permutation", super().permutation(x, axis))

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        """numpy's ``Generator.choice``, logged."""
        return self._logged("choice", super().choice(a, size, replace, p, axis, shuffle))

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        """numpy's ``Generator.integers``, logged."""
        return self._logged("integers", super().integers(low, high, size, dtype, endpoint))

    def geometric(self, p, size=None):
        """numpy's ``Generator.geometric``, logged."""
        return self._logged("geometric", super().geometric(p, size))
