"""Energies acting on the unknowns: elasticity, inertia, gravity.

Elasticity on linear tets: ``materials.py`` (registry MATERIALS = NH, SNH, FCR, LCR, LCR_LAGGED, LE;
``elastic_energy``, ``elastic_gradient_and_hessian_blocks``, ``needs_inversion_guard``), per-element densities in
``constitutive.py``, invariant-based stress/stiffness and analytic PSD projection in ``isotropic.py``, F and
dF/dx in ``kinematics.py``, hand-written 3x3 SVD / symmetric eigensolver / determinants in ``mat3.py``;
``neohookean.py`` keeps the NH entry points, rest-shape data, Lame parameters and the inversion step bound.
Allocation-free per-tet gradient / projected Hessian for the assembly in solvers/elastic.py: ``tet_blocks.py``
(with ``materials.material_response_into``) and ``svd_lanes.py`` (svd3_rv of many F at once, vectorised).
"""
