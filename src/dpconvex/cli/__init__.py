"""The ``dpconvex`` command: one module per command, each importing what it needs when it runs.

:func:`~dpconvex.cli.main.main` parses the arguments; :mod:`.train`, :mod:`.predict`,
:mod:`.account`, :mod:`.audit`, :mod:`.lab` (``bench`` and ``reproduce``, which load the
``dpconvex_lab`` package), :mod:`.parquet`; shared: :mod:`.choices` (the choices offered, without
importing the registries) and :mod:`.output` (printing and JSON).
"""

from dpconvex.cli.main import main

__all__ = ["main"]
