"""Every public function, every numeric parameter, every hostile value (issue 17 §2).

The sweep enumerates the ``__all__`` of the core, workload and measure modules (for
:mod:`commbook.cost`, which has none, its public functions), and calls each entry with
valid arguments (``BASE``) except one parameter set to a hostile value: negative, zero,
NaN, ±inf, a huge integer (10**400), a wrong type ('2', None, [1]), a numpy scalar, a 0-d
and a 2-d array, an empty sequence.  Each call must either

* return a result of the type the valid call returns, every number in it finite (and,
  where the valid result is >= 0, >= 0 as well), or
* raise ``ValueError`` / ``TypeError`` whose message names the parameter.

Numpy scalars of the valid value (np.int64 for an int, np.float64 / np.float32 for a float)
and the valid value as a 0-d array must give the valid result.  A negative value must be
refused unless the parameter is in ``NEGATIVE_OK``.  Entries that cannot be swept this
way are in ``NOT_SWEPT``, each with the reason; results that are NaN or +inf by design
in ``NAN_OK`` / ``INF_OK``.  The explicit cases of issue 17 §2 are tested one by one in
tests/test_bad_input.py.  Hypothesis then draws an entry, a numeric parameter and a value
(any float within 1e±150, NaN, ±inf, -0.0, integers <= 0 or > 2**53, numpy scalars and 0-d
arrays, wrong types), and drives the closed forms with all four arguments hostile at once.

Not covered: finite floats beyond 1e±150, where the product of two valid arguments can
overflow (the closed forms, the energy, TP and all-to-all bounds report it naming their
arguments, via ``checks.finite_time``), and valid but huge counts (a Switch of 10**9
devices builds per-device tables and runs out of memory: a resource limit, not a check).
"""
from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import numbers
import re
from fractions import Fraction

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commbook import cost
from commbook.comm_sim import VirtualCluster
from commbook.hardware import H100, IB_NDR, NVLINK4, Link
from commbook.measure.nccl_cluster import Cluster
from commbook.measure.nccl_model import H100_8
from commbook.topology import Switch, TwoLevel

MODULES = ["units", "hardware", "topology", "cost", "double_tree", "bandwidth", "physics", "collectives",
           "llm", "moe", "parallelism", "overlap", "compression",
           "measure", "measure.nccl_model", "measure.nccl_cluster", "measure.nccl_net"]

_SW = VirtualCluster(Switch(4, NVLINK4))
_TL = TwoLevel(2, 2, intra=NVLINK4, inter=IB_NDR)
_AB = dict(p=8, n=1e6, alpha=2e-6, beta=50e9)
_CL = Cluster("H100", 2, 8, 8, 400.0)

# Valid arguments for every entry whose parameters lack defaults, or whose defaults are
# not numbers (a parameter is swept when its valid value is a number, a Link or a
# non-empty sequence of numbers).
BASE: dict[str, dict] = {
    "units.fmt_bytes": dict(n=123456), "units.fmt_time": dict(t=1.5e-3), "units.fmt_rate": dict(bytes_per_s=5e10),
    "units.check_size": dict(n=8), "units.fmt_ratio": dict(x=2.0), "units.fmt_pct": dict(fraction=0.25),
    "units.fmt_count": dict(n=3), "units.fmt_number": dict(x=2.5),
    "units.fmt_number": dict(x=1440.0), "units.fmt_ratio": dict(x=10.5), "units.fmt_pct": dict(fraction=0.25),
    "units.fmt_count": dict(n=16384),
    "hardware.Link": dict(name="l", alpha=2e-6, beta=5e10, source="s", alpha_range=(1e-6, 3e-6)),
    "hardware.Chip": dict(name="c", bf16_flops=1e15, hbm_bandwidth=3e12, hbm_bytes=8e10, source="s"),
    "topology.Switch": dict(p=4, link=NVLINK4),
    "topology.SwitchTree": dict(leaves=2, gpus_per_leaf=2, link=NVLINK4),
    "topology.Ring": dict(p=4, link=NVLINK4, hop_alpha=1.0),
    "topology.Torus": dict(dims=(2, 2), link=NVLINK4, hop_alpha=1.0),
    "topology.TwoLevel": dict(nodes=2, gpus_per_node=2, intra=NVLINK4, inter=IB_NDR, oversubscription=1.0),
    "topology.ThreeTier": dict(racks=2, nodes_per_rack=2, gpus_per_node=2, intra=NVLINK4, inter=IB_NDR),
    "topology.ring_order": dict(dims=(2, 3)),
    "double_tree.double_tree_parents": dict(p=8),
    "double_tree.round_loads": dict(p=8, chunks=2),
    "double_tree.allreduce_double_tree": dict(_AB, chunks=4),
    "double_tree.double_tree_optimum": dict(_AB, k_max=64),
    "double_tree.allreduce_double_tree_envelope": dict(_AB),
    "bandwidth.algbw": dict(size=1e6, time=1e-3), "bandwidth.busbw": dict(op="all_reduce", size=1e6, time=1e-3,
                                                                         nranks=8),
    "physics.transceiver_pj_per_bit": dict(watts=8.0, bits_per_s=4e11, modules=2),
    "physics.energy_joules": dict(nbytes=1e9, pj_per_bit=5.0),
    "physics.allreduce_energy": dict(gpus=8, nbytes=1e9, pj_per_bit=5.0, factor=2.0),
    "physics.ring_traffic_factor": dict(p=8),
    "physics.propagation_delay": dict(meters=100.0, speed=2e8),
    "physics.bandwidth_delay_product": dict(bytes_per_s=5e10, meters=100.0, speed=2e8),
    "physics.fiber_speed": dict(group_index=1.4682),
    "collectives.all_reduce": dict(cluster=_SW, nbytes=64.0),
    "collectives.versus_closed_forms": dict(topology=Switch(4, NVLINK4), collective="all_reduce", nbytes=1e6),
    "collectives.broadcast": dict(cluster=_SW, nbytes=64.0, root=0),
    "collectives.reduce": dict(cluster=_SW, nbytes=64.0, root=0),
    "collectives.reduce_scatter": dict(cluster=_SW, nbytes=64.0),
    "collectives.all_gather": dict(cluster=_SW, nbytes=64.0),
    "collectives.all_to_all": dict(cluster=_SW, nbytes=64.0),
    "collectives.scatter": dict(cluster=_SW, nbytes=64.0, root=0),
    "collectives.gather": dict(cluster=_SW, nbytes=64.0, root=0),
    "collectives.send_recv": dict(cluster=_SW, nbytes=64.0, src=0, dst=1),
    "collectives.predict": dict(collective="all_reduce", name="ring", **_AB),
    "collectives.crossover": dict(a="ring", b="rd", p=8, alpha=2e-6, beta=50e9, n_max=1e15),
    "collectives.coefficients": dict(collective="all_reduce", name="ring", p=8),
    "collectives.t_formula": dict(algorithm_name="ring", **_AB),
    "collectives.t_broadcast": dict(name="chain", **_AB, chunks=4),
    "collectives.t_reduce": dict(name="binomial", **_AB),
    "collectives.t_reduce_scatter": dict(name="ring", **_AB),
    "collectives.t_all_gather": dict(name="ring", **_AB),
    "collectives.t_allreduce_hierarchical": dict(nodes=2, gpus_per_node=4, n=1e6, intra=NVLINK4, inter=IB_NDR),
    "collectives.t_allreduce_tiers": dict(topology=_TL, n=1e6),
    "llm.DenseModel": dict(name="m", n_layers=4, d_model=64, n_heads=4, n_kv_heads=2, head_dim=16, d_ff=128,
                           vocab=1000, source="s"),
    "llm.MoEModel": dict(name="m", d_model=64, n_layers=4, n_moe_layers=2, n_experts=8, top_k=2,
                         max_nodes_per_token=2, source="s"),
    "llm.decode_step": dict(batch=4, context=512, tp=8, bytes_per_param=2, kv_bytes_per_value=2, chip=H100),
    "llm.prefill_compute": dict(tokens=64, tp=8, chip=H100),
    "llm.tp_message_bytes": dict(tokens=4, bytes_per_value=2),
    "llm.tp_comm_time": dict(tokens=4, tp=8, gpus_per_node=8, bytes_per_value=2, intra=NVLINK4, inter=IB_NDR),
    "llm.moe_a2a_bytes": dict(tokens_per_gpu=16, ep=8, bytes_per_value=2),
    "llm.moe_a2a_time": dict(tokens_per_gpu=16, ep=4, bytes_per_value=2, intra=NVLINK4, inter=IB_NDR,
                             gpus_per_node=4),
    "llm.moe_cross_node_bytes": dict(tokens=4, bytes_per_value=2, max_nodes=2),
    "llm.kv_bytes": dict(tokens=16, bytes_per_value=2),
    "llm.kv_transfer_time": dict(tokens=16, nics=4, link=IB_NDR, bytes_per_value=2),
    "moe.MoEConfig": dict(tokens_per_rank=16, ranks=4, experts=8, top_k=2, d_model=8, bytes_per_value=2),
    "moe.expert_capacity": dict(tokens_per_rank=16, ranks=4, top_k=2, experts=8, capacity_factor=1.25),
    "moe.ExpertLoad": dict(n=64, q=0.25),
    "moe.expert_load": dict(tokens=64, top_k=2, experts=8),
    "moe.zipf_popularity": dict(experts=8, s=1.0, seed=1),
    "moe.a2a_bounds": dict(counts=np.ones((4, 4)) * 100, alpha=2e-6, inject_bw=5e10, bisection_bw=1e11),
    "parallelism.ddp_bucket_count": dict(model_bytes=1e9, bucket_cap=25e6),
    "parallelism.ddp": dict(params=1e9, world=8, bytes_per_value=2, bucket_cap=25e6),
    "parallelism.fsdp": dict(params=1e9, n_layers=4, world=8, bytes_per_value=2),
    "parallelism.zero": dict(stage=2, params=1e9, world=8, bytes_per_value=2, n_layers=2),
    "parallelism.zero_memory_per_gpu": dict(stage=2, params=1e9, world=8, k=12),
    "parallelism.pipeline_bubble_fraction": dict(p=4, m=8),
    "parallelism.min_microbatches": dict(p=4, target=0.1),
    "overlap.layerwise_timeline": dict(backward=[1.0, 2.0], allreduce=[0.5, 0.5], overhead=0.1, optimizer=0.2),
    "overlap.step_time_no_overlap": dict(backward=[1.0, 2.0], allreduce=[0.5, 0.5], overhead=0.1, optimizer=0.2),
    "overlap.step_time_perfect_overlap": dict(backward=[1.0, 2.0], allreduce=[0.5, 0.5], overhead=0.1,
                                              optimizer=0.2),
    "overlap.all_hidden": dict(backward=[1.0, 2.0], allreduce=[0.5, 0.5]),
    "overlap.ddp_bucket_assignment": dict(param_bytes=[4000, 3000, 2000], bucket_cap=5000, first_bucket=1000),
    "overlap.bucket_timeline": dict(param_bytes=[4000, 3000], backward=[1e-3, 1e-3],
                                    allreduce_cost=lambda n: 1e-6 + n / 1e9, bucket_cap=5000, first_bucket=1000,
                                    overhead=0.0, optimizer=0.0),
    "overlap.ring_allreduce_cost": dict(p=8, link=IB_NDR),
    "overlap.hidden_fraction_equal_layers": dict(n_layers=8, layer_time=1.0),
    "overlap.single_node_check": dict(params=70e9, gpus=8, step_budget=2.1, gpu_memory=80e9, link=NVLINK4),
    "compression.Int8": dict(block=64), "compression.Sign": dict(chunk=64),
    "compression.TopK": dict(fraction=0.1), "compression.RandomK": dict(k=10),
    "compression.Threshold": dict(threshold=Fraction(1, 2), quantum=1),
    "compression.index_dtype_for": dict(d=1000), "compression.int8_block_ratio": dict(block=64),
    "compression.sparse_ratio": dict(d=1000, k=10, value_bytes=4, index_bytes=4),
    "compression.decimal_text": dict(x=Fraction(1, 3), places=6),
    "compression.least_squares": dict(workers=2, dim=8, rows=8, heterogeneity=0.005, noise=0.0, seed=0),
    "compression.onebit_adam_ratio": dict(warmup=0.2, bits=32),
    "compression.compression_payoff": dict(t_comm=1.0, ratio=4.0, overhead=0.1),
    "compression.step_time": dict(t_compute=1.0, t_comm=0.5, ratio=4.0, overhead=0.01),
    "compression.time_to_train": dict(steps=1000, t_compute=1.0, t_comm=0.5, ratio=4.0, extra_steps=10,
                                      overhead=0.01),
    "compression.break_even_comm_time": dict(t_compute=1.0, ratio=4.0, extra_steps=0.1, overhead=0.01),
    "compression.compression_decision": dict(steps=1000, t_compute=1.0, t_comm=0.5, ratio=4.0, extra_steps=0.1,
                                             overhead=0.01),
    "compression.compressed_allreduce_time": dict(**_AB, ratio=4.0),
    "measure.fit": dict(sizes=[1e3, 1e4, 1e5, 1e6], times=[7.0175e-5, 7.175e-5, 8.75e-5, 2.45e-4],
                        collective="all_reduce", algorithm="ring", p=8),
    "measure.fit_point_to_point": dict(sizes=[1e3, 1e4, 1e5, 1e6], times=[1.1e-5, 1.2e-5, 3e-5, 2.1e-4]),
    "measure.model_coefficients": dict(collective="all_reduce", algorithm="ring", p=8, sizes=[1e3, 1e6]),
    "measure.nccl_net.nic_bw": dict(gbps=400.0), "measure.nccl_net.pcie_bw": dict(gen=5, width=16),
    "measure.nccl_cluster.predict_cluster": dict(gpu="H100", nodes=2, gpus_per_node=8, nics=8, nic_gbps=400.0,
                                                 sizes=[1e6, 1e8]),
    "measure.nccl_cluster.Cluster": dict(gpu="H100", nodes=2, gpus_per_node=8, nics=8, nic_gbps=400.0),
    "measure.nccl_net.Cluster": dict(gpu="H100", nodes=2, gpus_per_node=8, nics=8, nic_gbps=400.0),
    "measure.nccl_model.Node": dict(gpu="H100", nvlink_gen=4, nvlinks=18, nics=8, ngpus=8),
    "measure.nccl_model.algo_time": dict(node=H100_8, collective="all_reduce", algo="ring", proto="LL", nbytes=1e6),
    "measure.nccl_model.choose": dict(node=H100_8, collective="all_reduce", nbytes=1e6),
    "measure.nccl_model.runtime_channels": dict(node=H100_8, algo="ring", proto="LL", nbytes=1e6),
    "measure.nccl_model.predict_nccl": dict(node=H100_8, collective="all_reduce", sizes=[1e3, 1e6], overhead=1e-6),
    "measure.nccl_cluster.algo_time": dict(c=_CL, collective="all_reduce", algo="tree", proto="LL128", nbytes=1e6),
    "measure.nccl_cluster.choose": dict(c=_CL, collective="all_reduce", nbytes=1e6),
    "measure.nccl_cluster.runtime_channels": dict(c=_CL, algo="tree", proto="LL128", nbytes=1e6),
    "measure.nccl_cluster.predict_nccl": dict(c=_CL, collective="all_reduce", sizes=[1e3, 1e6], overhead=1e-6),
}
for _name in ("allreduce_ring", "allreduce_rd", "allreduce_tree", "allreduce_double_binomial", "allreduce_naive",
              "allreduce_innet", "allreduce_one_shot", "allreduce_two_shot", "broadcast_binomial", "broadcast_flat",
              "broadcast_scatter_allgather", "reduce_scatter_ring", "reduce_scatter_rh", "all_gather_rd",
              "scatter_flat", "chain_broadcast_optimum", "reduce_binomial", "reduce_flat", "all_gather_ring",
              "all_to_all_direct", "gather_flat"):
    BASE[f"cost.{_name}"] = dict(_AB)
BASE.update({
    "cost.p2p_time": dict(n=1e6, alpha=2e-6, beta=5e10), "cost.effective_bandwidth": dict(n=1e6, alpha=2e-6, beta=5e10),
    "cost.half_bandwidth_point": dict(alpha=2e-6, beta=5e10), "cost.LogP": dict(L=1e-6, o=2e-6, g=3e-6),
    "cost.allreduce_rabenseifner": dict(_AB, order="far_first"),
    "cost.allreduce_rabenseifner_on_ring": dict(_AB, order="near_first", hop_alpha=2.0),
    "cost.allreduce_parameter_server": dict(_AB, servers=2),
    "cost.broadcast_chain": dict(_AB, chunks=4),
    "cost.allreduce_hierarchical": dict(nodes=2, gpus_per_node=4, n=1e6, intra=NVLINK4, inter=IB_NDR),
    "cost.allreduce_leader": dict(nodes=2, gpus_per_node=4, n=1e6, intra=NVLINK4, inter=IB_NDR),
    "cost.allreduce_torus_rings": dict(dims=(2, 4), n=1e6, alpha=2e-6, beta=5e10),
    "cost.allreduce_torus": dict(dims=(2, 4), n=1e6, alpha=2e-6, beta=5e10),
    "cost.lower_bound_bytes": dict(op="all_reduce", p=8, n=1e6),
    "cost.all_to_all_bounds": dict(p=8, n=1e6, beta_port=5e10, bisection_bw=2e11),
    "cost.crossover_rd_ring": dict(p=8, alpha=2e-6, beta=5e10),
    "cost.crossover_tree_ring": dict(p=8, alpha=2e-6, beta=5e10),
})

# Entries the sweep does not call, with the reason.
NOT_SWEPT: dict[str, str] = {
    "units.check_size": "the check itself (tested in test_bad_input); its name= argument is a label",
    "topology.Topology": "abstract base class, no numeric parameter",
    "llm.tp_allreduces_per_step": "takes a DenseModel only (swept as llm.DenseModel; a non-model is a TypeError, "
                                  "test_bad_input)",
    "double_tree.tree_depths": "takes a parent array (checked: 1-D integers, ranks in range, a root, no cycle)",
    "cost.closed_form": "a decorator, not a function of numbers",
    "collectives.Algorithm": "registry record built by registry.py from checked builders; not an entry point",
    "collectives.all_to_all_v": "counts is a matrix, tested in test_bad_input (shape, sign, NaN, type)",
    "collectives.algorithm": "string arguments only (unknown names tested in test_bad_input)",
    "collectives.names": "string argument only",
    "collectives.check_reduction": "takes arrays (outputs, data): their checks are tested in test_check_reduction",
    "physics.EnergyPerBit": "a record of cited constants (strings and the figures of a source)",
    "physics.Interconnect": "a record of cited constants (a generation's datasheet values)",
    "physics.energy_ratio": "string arguments only (tier names)",
    "physics.generation": "string argument only", "physics.bandwidth_ratio": "string arguments only",
    "physics.contemporary_pairs": "string arguments only",
    "moe.Routing": "result record built by route()", "moe.route": "takes a MoEConfig (swept as moe.MoEConfig)",
    "moe.uniform_counts": "takes a MoEConfig (swept as moe.MoEConfig)",
    "moe.a2a_bounds_on": "takes a topology and a counts matrix (a2a_bounds, which it calls, is swept)",
    "moe.count_flows": "takes a RunResult and a TwoLevel, no numeric parameter",
    "overlap.transfer_beside_compute": "t_compute swept through cost.LogP.overlapped in test_bad_input",
    "overlap.bucket_cap_sweep": "takes a ModelShape; its caps go through ddp_bucket_assignment (swept)",
    "overlap.best_bucket_cap": "takes the result of bucket_cap_sweep",
    "compression.Compressor": "abstract base class", "compression.Identity": "no parameter",
    "compression.FP16": "no parameter", "compression.ErrorFeedback": "takes a Compressor",
    "compression.ef_trace": "exact rational traces of a gradient sequence (Fraction arithmetic; tested in "
                            "test_compression)",
    "compression.exact": "converts a decimal to a Fraction (its point is any rational input)",
    "compression.steady_state": "exact rational search (Fraction arithmetic; tested in test_compression)",
    "compression.train_sgd": "takes a LeastSquares problem; seconds-long training loops",
    "compression.train_adam": "takes a LeastSquares problem; seconds-long training loops",
    "compression.train_onebit_adam": "takes a LeastSquares problem; seconds-long training loops",
    "compression.update_at_optimum": "takes a LeastSquares problem",
    "measure.parse_nccl_tests": "text parser (issue 17 §1, owned by the parser work)",
    "measure.parse_busbw_markdown": "text parser", "measure.load_log": "file name only",
    "measure.available_logs": "no parameter", "measure.printed_half_unit": "text parser",
    "measure.resolve_size_label": "text parser", "measure.collective_name": "text parser",
    "measure.Run": "parser record (records.py)", "measure.Row": "parser record (records.py)",
    "measure.Timing": "parser record (records.py)", "measure.Device": "parser record (records.py)",
    "measure.fit_run": "takes a parsed Run (fit_point_to_point and model_coefficients are swept)",
    "measure.nccl_model.graphs": "takes a Node", "measure.nccl_model.table": "takes a Node",
    "measure.nccl_model.unavailable": "takes a Node",
    "measure.nccl_model.compare": "takes a parsed Run and a Node",
    "measure.nccl_cluster.graphs": "takes a Cluster (swept)", "measure.nccl_cluster.comm_channels": "takes a Cluster",
    "measure.nccl_cluster.unavailable": "takes a Cluster", "measure.nccl_cluster.table": "takes a Cluster",
    "measure.nccl_cluster.compare": "takes a parsed Run and a Cluster",
    "measure.nccl_net.Graph": "NCCL graph record computed by net_graphs",
    "measure.nccl_net.net_graphs": "NCCL's internal graph search on NCCL's constants (called by Cluster)",
    "measure.nccl_net.bandwidth": "NCCL's internal tuning formula (called by Cluster)",
    "measure.nccl_net.latency": "NCCL's internal tuning formula (called by Cluster)",
}
RESULT_RECORDS = "result record (built by the package from checked inputs, not an entry point)"
for _r in ("llm.StepTime", "moe.A2ABounds", "moe.FlowCount", "parallelism.Collective", "parallelism.StepComm",
           "overlap.Block", "overlap.Timeline", "overlap.BucketPlan", "overlap.ModelShape", "overlap.SingleNodeCheck",
           "compression.Payload", "compression.TraceRow", "compression.SteadyState", "compression.LeastSquares",
           "compression.Run", "compression.Payoff", "compression.Decision", "measure.Fit",
           "measure.nccl_model.Graphs", "measure.nccl_model.Entry", "measure.nccl_model.Choice",
           "measure.nccl_model.Prediction", "measure.nccl_model.Comparison", "measure.nccl_cluster.ClusterPrediction",
           "collectives.Coefficients"):
    NOT_SWEPT[_r] = RESULT_RECORDS

# Parameters for which a negative value is meaningful, with the reason.
NEGATIVE_OK: dict[str, str] = {
    "units.fmt_time.t": "a signed duration (a difference of two times) prints as '-1 s' "
                        "(test_units_hardware asserts it)",
    "units.fmt_number.x": "a plain number prints with its sign", "units.fmt_ratio.x": "a signed ratio prints as is",
    "units.fmt_pct.fraction": "a signed share (a change) prints as '-5%'",
    "units.fmt_count.n": "a signed count (a difference of two counts) prints with its sign",
}

# Entries whose result holds NaN (undefined) or +inf ("never") by design, with the reason.
NAN_OK: dict[str, str] = {
    "measure.nccl_cluster.predict_cluster": "the ring fit (ring_fit_*) is NaN with fewer than two distinct sizes, "
                                            "as its docstring says",
}
INF_OK: dict[str, str] = {
    "compression.break_even_comm_time": "inf when (1 + extra_steps) >= ratio: no communication time makes "
                                        "compression pay (its docstring)",
    "compression.compression_decision": "break_even_comm is break_even_comm_time's inf in the same case",
}

HUGE = 10**400


def _entries():
    """(qualified name, callable) for every public callable of MODULES."""
    out = []
    for m in MODULES:
        mod = importlib.import_module(f"commbook.{m}")
        if hasattr(mod, "__all__"):
            names = mod.__all__
        else:
            names = [n for n, o in vars(mod).items() if not n.startswith("_") and callable(o)
                     and getattr(o, "__module__", None) == mod.__name__]
        for n in names:
            obj = getattr(mod, n)
            if callable(obj) and not isinstance(obj, dict) and not (isinstance(obj, type)
                                                                    and issubclass(obj, BaseException)):
                out.append((f"{m}.{n}", obj))
    return out


ENTRIES = _entries()


def _sweepable(value) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, numbers.Integral):
        return "int"
    if isinstance(value, numbers.Real) and not isinstance(value, Fraction):
        return "float"
    if isinstance(value, Link):
        return "link"
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, numbers.Real) for v in value):
        return "seq"
    return None


def _params(name, fn) -> dict:
    """The valid keyword arguments of an entry: BASE, else its numeric defaults."""
    if name in BASE:
        return dict(BASE[name])
    sig = inspect.signature(fn)
    return {k: p.default for k, p in sig.parameters.items() if p.default is not inspect.Parameter.empty}


def _hostile(kind, value):
    common = [("neg", -1), ("zero", 0), ("nan", math.nan), ("inf", math.inf), ("-inf", -math.inf),
              ("huge", HUGE), ("str", "2"), ("None", None), ("list", [1]), ("2d", np.ones((2, 2))),
              ("empty", [])]
    if kind == "link":
        return [("str", "IB"), ("None", None), ("number", 5.0), ("tuple", (2e-6, 5e10))]
    if kind == "seq":
        return [("empty", []), ("str", "ab"), ("None", None), ("nan", [math.nan] * len(value)),
                ("neg", [-1] * len(value)), ("huge", [HUGE] * len(value)), ("strs", ["2"] * len(value)),
                ("number", 3), ("2d", np.ones((2, 2)))]
    if kind == "int":
        return common + [("np.int64", np.int64(value)), ("0-d", np.array(value)), ("float", float(value) + 0.5)]
    return common + [("np.float64", np.float64(value)), ("np.float32", np.float32(value)), ("0-d", np.array(value))]


_SAME_RESULT = {"np.int64", "np.float64", "0-d"}


SIGNED_FIELDS = {("Fit", "residuals")}
"""Result fields signed by definition, left out of the sign rule only: a fit's residuals
(measured − predicted) are as often below zero as above, even at rounding noise."""


def _numbers(x, depth=0, unsigned=False):
    """Every number in a result (recursively through tuples, lists, dicts, arrays, dataclasses);
    ``unsigned``: without the :data:`SIGNED_FIELDS`."""
    if depth > 3:
        return
    if isinstance(x, bool):
        return
    if isinstance(x, numbers.Integral):
        yield float(max(-1e308, min(int(x), 1e308)))   # a Python int is exact, whatever its size
    elif isinstance(x, numbers.Real):
        try:
            yield float(x)
        except OverflowError:
            yield math.inf
    elif isinstance(x, np.ndarray) and x.dtype.kind in "fiu":
        yield from (float(v) for v in x.ravel()[:1000])
    elif isinstance(x, (list, tuple)):
        for v in x[:100]:
            yield from _numbers(v, depth + 1, unsigned)
    elif isinstance(x, dict):
        for v in list(x.values())[:100]:
            yield from _numbers(v, depth + 1, unsigned)
    elif dataclasses.is_dataclass(x) and not isinstance(x, type):
        for f in dataclasses.fields(x):
            if not (unsigned and (type(x).__name__, f.name) in SIGNED_FIELDS):
                yield from _numbers(getattr(x, f.name), depth + 1, unsigned)


def _same(a, b) -> bool:
    na, nb = list(_numbers(a)), list(_numbers(b))
    return len(na) == len(nb) and all(math.isclose(x, y, rel_tol=1e-5, abs_tol=1e-300) for x, y in zip(na, nb))


def _names_param(msg: str, param: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(param)}(?![A-Za-z0-9_])", msg) is not None


def check_call(name, fn, kwargs, param, label, value, base_result):
    """None if the call behaves, else a line saying what went wrong."""
    args = dict(kwargs, **{param: value})
    try:
        result = fn(**args)
    except (ValueError, TypeError) as exc:
        if not _names_param(str(exc), param):
            return f"{name}({param}={label}): {type(exc).__name__} does not name {param!r}: {exc}"
        if label in _SAME_RESULT or (label == "np.float32" and base_result is not None):
            if label == "np.float32" and isinstance(exc, ValueError):
                return None  # float32 rounding may leave a valid range (1e-300 -> 0)
            return f"{name}({param}={label}): refused a numpy form of a valid value: {exc}"
        return None
    except Exception as exc:  # noqa: BLE001 - the point is to report it
        return f"{name}({param}={label}): {type(exc).__name__}: {exc}"[:300]
    both_numbers = all(isinstance(x, numbers.Real) and not isinstance(x, bool) for x in (result, base_result))
    if not (isinstance(result, type(base_result)) or both_numbers):
        return f"{name}({param}={label}): returned {type(result).__name__}, valid call {type(base_result).__name__}"
    nums = [v for v in _numbers(result)
            if not (name in NAN_OK and math.isnan(v) or name in INF_OK and v == math.inf)]
    if not all(math.isfinite(v) for v in nums):
        return f"{name}({param}={label}): returned a non-finite number: {result!r}"[:300]
    base_nums, signs = list(_numbers(base_result, unsigned=True)), list(_numbers(result, unsigned=True))
    if base_nums and all(v >= 0 for v in base_nums) and any(v < 0 for v in signs) \
            and f"{name}.{param}" not in NEGATIVE_OK:
        return f"{name}({param}={label}): returned a negative number: {result!r}"[:300]
    if label == "neg" and f"{name}.{param}" not in NEGATIVE_OK:
        return f"{name}({param}={label}): accepted a negative value: {result!r}"[:300]
    if label in _SAME_RESULT and not _same(result, base_result):
        return f"{name}({param}={label}): numpy form gives another result"
    return None


def sweep(only=None):
    """Run the sweep; return (failures, number of calls, entries swept)."""
    failures, calls, swept = [], 0, []
    for name, fn in ENTRIES:
        if name in NOT_SWEPT or (only and not name.startswith(only)):
            continue
        kwargs = _params(name, fn)
        try:
            base_result = fn(**kwargs)
        except Exception as exc:  # noqa: BLE001
            failures.append(f"{name}: the valid call fails: {type(exc).__name__}: {exc}")
            continue
        params = {k: _sweepable(v) for k, v in kwargs.items()}
        params = {k: v for k, v in params.items() if v}
        if not params:
            failures.append(f"{name}: nothing to sweep (add it to BASE or NOT_SWEPT)")
            continue
        swept.append(name)
        for param, kind in params.items():
            for label, value in _hostile(kind, kwargs[param]):
                calls += 1
                line = check_call(name, fn, kwargs, param, label, value, base_result)
                if line:
                    failures.append(line)
    return failures, calls, swept


def test_every_public_callable_is_swept_or_listed():
    names = {n for n, _ in ENTRIES}
    assert not set(NOT_SWEPT) - names, f"NOT_SWEPT lists names that are not public: {set(NOT_SWEPT) - names}"
    assert not set(BASE) - names, f"BASE lists names that are not public: {set(BASE) - names}"


def test_hostile_sweep():
    failures, calls, swept = sweep()
    assert calls > 2000 and len(swept) > 90, (calls, len(swept))
    assert not failures, f"{len(failures)} of {calls} calls misbehave:\n" + "\n".join(failures)


# ----------------------------------------------------------------------------- hypothesis
def _swept_params():
    """(name, fn, valid kwargs, valid result, parameter) for every swept numeric parameter."""
    out = []
    for name, fn in ENTRIES:
        if name in NOT_SWEPT:
            continue
        kwargs = _params(name, fn)
        base = fn(**kwargs)
        out += [(name, fn, kwargs, base, k) for k, v in kwargs.items() if _sweepable(v) in ("int", "float")]
    return out


SWEPT = _swept_params()
# Hostile, not merely large: a valid count of 10**9 devices is a resource question (it
# allocates per-device tables), not a validation one, so positive integers stay small; finite
# floats stay within 1e±150 (beyond, a product of two valid numbers can overflow a float,
# which the closed forms report by name through checks.finite_time but not every derived
# quantity does: see the module docstring).
_float = st.floats(-1e150, 1e150, allow_subnormal=False).filter(lambda x: x == 0 or abs(x) > 1e-150)
_hostile_number = st.one_of(
    _float, st.sampled_from([math.nan, math.inf, -math.inf, -0.0]), st.integers(-10**30, 0), st.integers(1, 16),
    st.integers(2**53 + 1, 10**400), st.floats(-1e30, 1e30).map(np.float32),
    st.integers(-2**62, 0).map(np.int64), _float.map(np.array),
    st.sampled_from(["2", "", None, [1], (), {}, b"1", True, np.ones((2, 2)), np.array([1.0]), object()]))


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(i=st.integers(0, len(SWEPT) - 1), value=_hostile_number)
def test_any_value_for_any_numeric_parameter(i, value):
    """Hypothesis draws an entry, one of its numeric parameters and any value: a finite,
    correctly typed result (>= 0 where the valid one is), or a ValueError/TypeError that
    names the parameter."""
    name, fn, kwargs, base, param = SWEPT[i]
    line = check_call(name, fn, kwargs, param, "hypothesis", value, base)
    assert line is None, line


CLOSED_FORMS = [cost.allreduce_ring, cost.allreduce_rd, cost.allreduce_tree, cost.allreduce_rabenseifner,
                cost.broadcast_binomial, cost.broadcast_chain, cost.reduce_scatter_ring, cost.scatter_flat,
                cost.allreduce_parameter_server]
_any_number = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**400, 10**400),
                        st.sampled_from([np.float32(1.0), np.int64(4), np.array(3.0), "1", None, [1.0]]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(f=st.sampled_from(CLOSED_FORMS), p=_any_number, n=_any_number, alpha=_any_number, beta=_any_number)
def test_closed_forms_any_input(f, p, n, alpha, beta):
    """Any input to a closed form: a finite time >= 0, or a ValueError/TypeError naming an argument."""
    try:
        t = f(p, n, alpha, beta)
    except (ValueError, TypeError) as exc:
        assert any(_names_param(str(exc), k) for k in ("p", "n", "alpha", "beta")), str(exc)
        return
    assert isinstance(t, float) and math.isfinite(t) and t >= 0, t


if __name__ == "__main__":
    import sys
    import time
    t0 = time.perf_counter()
    fails, ncalls, done = sweep(sys.argv[1] if len(sys.argv) > 1 else None)
    print("\n".join(fails))
    print(f"{len(fails)} failures, {ncalls} calls, {len(done)} entries, {time.perf_counter() - t0:.1f} s")
