"""Deprecated import path: the module is :mod:`dpconvex.estimators.model_selection`."""

from dpconvex._moved import alias

alias(__name__)
