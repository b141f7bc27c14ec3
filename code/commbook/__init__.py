"""commbook: the code behind the executable textbook on collective communication.

Layers, imports pointing one way:

* **core** — :mod:`checks`, :mod:`units` → :mod:`hardware` → :mod:`topology` →
  :mod:`cost` (closed forms), :mod:`double_tree`, :mod:`bandwidth`, :mod:`physics` → :mod:`comm_sim` (the
  engine) → :mod:`collectives` (schedules, the algorithm registry, the public API);
* **workloads** — :mod:`llm`, :mod:`moe`, :mod:`parallelism`, :mod:`overlap`, :mod:`compression`;
* **measure** — :mod:`measure` (nccl-tests logs, recorded measurements, α–β fits);
* **book** — :mod:`book.tables`, :mod:`book.plots` and one subpackage per source
  (:mod:`book.p5`, :mod:`book.ch1`).  Nothing in the core imports the book layer.
"""
from importlib.metadata import PackageNotFoundError as _NotInstalled, version as _version

try:
    __version__ = _version("commbook")
    """The installed package's version: pyproject.toml's ``version``, the one version number."""
except _NotInstalled:  # imported from a source tree that was never installed
    __version__ = "0+unknown"
