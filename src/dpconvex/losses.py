"""Deprecated import path: the module is :mod:`dpconvex.objectives.losses`."""

from dpconvex._moved import alias

alias(__name__)
