"""Deprecated import path: the module is :mod:`dpconvex.estimators.model_file`."""

from dpconvex._moved import alias

alias(__name__)
