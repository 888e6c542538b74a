"""Deprecated import path: the module is :mod:`dpconvex.estimators.preprocessing`."""

from dpconvex._moved import alias

alias(__name__)
