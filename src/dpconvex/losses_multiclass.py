"""Deprecated import path: the module is :mod:`dpconvex.objectives.multiclass`."""

from dpconvex._moved import alias

alias(__name__)
