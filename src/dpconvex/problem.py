"""Deprecated import path: the module is :mod:`dpconvex.mechanisms.problem`."""

from dpconvex._moved import alias

alias(__name__)
