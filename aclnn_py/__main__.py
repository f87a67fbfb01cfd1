"""``python -m aclnn_py {info,ops,selftest,bench}``: tools for a host with (or without) an NPU."""

from __future__ import annotations

import argparse
import importlib
import sys

# subcommand -> (module of aclnn_py.tools, one-line help)
COMMANDS = {
    "info": ("info", "which backends are usable, what was found where, and how to fix what is missing"),
    "ops": ("ops", "every operator the toolkit's headers declare: its library, and whether the binding "
                   "can declare it (and why not)"),
    "selftest": ("selftest", "run every operator on representative cases and compare with a reference "
                             "(the first command on a new host)"),
    "bench": ("bench", "time one operator: warm-up, repeats, median/min/max (device time on npu/sim)"),
}


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m aclnn_py",
                                  description="Tools for aclnn_py on a host with or without an NPU.")
    sub = top.add_subparsers(dest="command", metavar="{" + ",".join(COMMANDS) + "}")
    for name, (module, help_text) in COMMANDS.items():
        tool = importlib.import_module(f"aclnn_py.tools.{module}")
        p = sub.add_parser(name, help=help_text, description=tool.__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        tool.add_arguments(p)
        p.set_defaults(run=tool.run)
    return top


def main(argv: list[str] | None = None) -> int:
    top = parser()
    args = top.parse_args(argv)
    if args.command is None:
        top.print_help(sys.stderr)
        return 2
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
