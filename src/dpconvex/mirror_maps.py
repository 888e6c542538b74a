"""Deprecated import path: the module is :mod:`dpconvex.objectives.mirror_maps`."""

from dpconvex._moved import alias

alias(__name__)
