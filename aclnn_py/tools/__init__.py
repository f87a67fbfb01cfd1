"""The command-line tools behind ``python -m aclnn_py``: ``info``, ``selftest``, ``bench``.

Each module is usable from Python as well: ``info.collect()``, ``selftest.run_selftest()``,
``bench.benchmark()``; and gives ``__main__`` an ``add_arguments(parser)`` and a
``run(args) -> exit status``. The modules are imported only by the subcommand that needs them.
"""
