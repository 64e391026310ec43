"""Solvers: projected Newton with CCD-bounded line search, linear solvers."""
