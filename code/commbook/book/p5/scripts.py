"""The P5 scripts: which demo tables each prints, and the main they share."""
from __future__ import annotations

from . import allreduce, inference, links, semantics, topology

DEMOS = {
    "01-1": links.demo_01_1, "01-2": links.demo_01_2, "01-3": links.demo_01_3,
    "02-1": semantics.demo_02_1, "02-2": semantics.demo_02_2, "02-3": semantics.demo_02_3,
    "03-1": allreduce.demo_03_1, "03-2": allreduce.demo_03_2, "03-3": allreduce.demo_03_3,
    "03-4": allreduce.demo_03_4,
    "04-1": topology.demo_04_1, "04-2": topology.demo_04_2, "04-3": topology.demo_04_3,
    "05-1": inference.demo_05_1, "05-2": inference.demo_05_2, "05-3": inference.demo_05_3,
    "05-4": inference.demo_05_4, "05-5": inference.demo_05_5,
}
"""Every demo function by its key."""

SCRIPTS = {
    "01": ("01-1", "01-2", "01-3"),
    "02": ("02-1", "02-2", "02-3"),
    "03": ("03-1", "03-2", "03-3", "03-4"),
    "04": ("04-1", "04-2", "04-3"),
    "05": ("05-1", "05-2", "05-3", "05-4", "05-5"),
}
"""Which demos each script prints, in order."""


def script_main(script: str, description: str, argv: list[str] | None = None) -> int:
    """What every P5 script does: print its demo tables (``SCRIPTS[script]``) as
    aligned plain text, in English or, with ``--lang zh``, in Chinese."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--lang", choices=("en", "zh"), default="en", help="header language")
    args = parser.parse_args(argv)
    print("\n".join(DEMOS[key]().to_text(args.lang) for key in SCRIPTS[script]), end="")
    return 0
