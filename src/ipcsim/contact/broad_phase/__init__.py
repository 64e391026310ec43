"""Broad phase: candidate primitive pairs from bounding boxes (Numba cell join by default; the older per-query
hash grid and an O(n^2) brute-force reference)."""
from .candidates import METHODS, Candidates, brute_force_candidates, build_candidates

__all__ = ["METHODS", "Candidates", "brute_force_candidates", "build_candidates"]
