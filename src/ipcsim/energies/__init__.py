"""Energies acting on the unknowns: elasticity, inertia, gravity."""
