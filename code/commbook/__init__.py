"""commbook: the code behind the executable textbook on collective communication.

Every figure, table and worked answer of the book comes from these modules:
:mod:`units`, :mod:`hardware`, :mod:`cost`, :mod:`topology`, :mod:`comm_sim`,
:mod:`collectives`, :mod:`llm`, :mod:`tables`, :mod:`demos`, :mod:`demos_llm`,
:mod:`plots` and :mod:`figures_p5`.
"""
__version__ = "0.1.0"
