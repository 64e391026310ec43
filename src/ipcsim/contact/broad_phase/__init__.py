"""Broad phase: candidate primitive pairs from bounding boxes (Numba hash grid, brute-force reference)."""
from .candidates import METHODS, Candidates, brute_force_candidates, build_candidates

__all__ = ["METHODS", "Candidates", "brute_force_candidates", "build_candidates"]
