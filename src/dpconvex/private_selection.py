"""Deprecated import path: the module is :mod:`dpconvex.mechanisms.selection`."""

from dpconvex._moved import alias

alias(__name__)
