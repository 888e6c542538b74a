"""Deprecated import path: the module is :mod:`dpconvex.privacy.certificate`."""

from dpconvex._moved import alias

alias(__name__)
