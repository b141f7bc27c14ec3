r"""Gradient compression (chapter §1.6), in five modules:

* :mod:`~commbook.compression.base` — the payload (the arrays on the wire, their encoded
  size and ratio to FP32) and the interface every compressor implements;
* :mod:`~commbook.compression.operators` — FP16, INT8 (per tensor, per block), 1-bit
  sign, top-k, random-k and the chapter's toy threshold compressor;
* :mod:`~commbook.compression.feedback` — error feedback around any operator, the exact
  traces of Tables 3 and 4 and the steady state of Checkpoint 1.4;
* :mod:`~commbook.compression.training` — data-parallel least squares with compressed
  gradients, Adam and 1-bit Adam;
* :mod:`~commbook.compression.payoff` — when compression pays: Napkin Math 1.7, the
  time-to-train decision, break-even times.

A workload: it imports the core (:mod:`commbook.checks`, :mod:`commbook.collectives`),
never the book layer.
"""
from .feedback import ErrorFeedback, SteadyState, TraceRow, decimal_text, ef_trace, exact, steady_state
from .operators import (FP16, FP32_BYTES, Compressor, Identity, Int8, Payload, RandomK, Sign, Threshold,
                        TopK, index_dtype_for, int8_block_ratio, sparse_ratio)
from .payoff import (Decision, Payoff, break_even_comm_time, compressed_allreduce_time, compression_decision,
                     compression_payoff, step_time, time_to_train)
from .training import (LeastSquares, Run, least_squares, onebit_adam_ratio, train_adam, train_onebit_adam,
                       train_sgd, update_at_optimum)

__all__ = ["Compressor", "Payload", "FP32_BYTES", "Identity", "FP16", "Int8", "Sign", "TopK", "RandomK",
           "Threshold", "index_dtype_for", "int8_block_ratio", "sparse_ratio",
           "ErrorFeedback", "TraceRow", "ef_trace", "exact", "decimal_text", "SteadyState", "steady_state",
           "LeastSquares", "Run", "least_squares", "train_sgd", "train_adam", "train_onebit_adam",
           "onebit_adam_ratio", "update_at_optimum",
           "Payoff", "compression_payoff", "step_time", "time_to_train",
           "break_even_comm_time", "Decision", "compression_decision", "compressed_allreduce_time"]
