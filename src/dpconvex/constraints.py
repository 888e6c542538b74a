"""Deprecated import path: the module is :mod:`dpconvex.objectives.constraints`."""

from dpconvex._moved import alias

alias(__name__)
