"""Objectives: the losses (binary and K-class), the constraint sets and the mirror maps.

Layer: above :mod:`dpconvex.accounting`, below the data access and the mechanisms; each loss declares
the constants (Lipschitz, smoothness, strong convexity) the certificates rely on.

Modules: :mod:`.losses` (binary margin losses and regression losses), :mod:`.multiclass` (softmax
and one-vs-rest), :mod:`.clipping` (the clip factors of per-example gradients), :mod:`.constraints`
(the domains and their projections), :mod:`.mirror_maps` (the potentials of mirror descent).
"""
