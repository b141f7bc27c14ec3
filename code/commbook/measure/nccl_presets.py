"""The clusters of the recorded multi-node nccl-tests logs, as :class:`~commbook.measure.nccl_net.Cluster`
presets (what each log's source states, and what is assumed where it does not), and which preset
each log ran on (:data:`LOG_PRESETS`).  :mod:`.nccl_cluster` predicts on them and re-exports them.

>>> PRESETS[LOG_PRESETS["multinode/h100x16_gcp_a3mega_tcpxo_allreduce.log"]] == A3_MEGA_2x8
True
>>> A3_MEGA_2x8.nranks, COREWEAVE_H100_12x8_SHARP.nranks, GB200_NVL72_20.nranks
(16, 96, 1440)
"""
from __future__ import annotations

from .nccl_net import Cluster

__all__ = ["A3_MEGA_2x8", "COREWEAVE_A100_4x8_SHARP", "COREWEAVE_H100_12x8_SHARP", "GB200_NVL72_1",
           "GB200_NVL72_2", "GB200_NVL72_20", "PRESETS", "LOG_PRESETS"]

A3_MEGA_2x8 = Cluster("H100", 2, 8, nics=8, nic_gbps=200, network="tcpxo", cpu="intel")
"""Google Cloud A3 Mega, 2 × 8 H100 (the TCPXO log): 8 GPUDirect-TCPXO NICs of 200 Gb/s per
node (Google's A3 Mega description), seen by NCCL through the TCPXO net plugin as 25 GB/s NICs
with latency 0; PCIe Gen5; Intel hosts; no SHARP; no tuner plugin (all assumed)."""
COREWEAVE_A100_4x8_SHARP = Cluster("A100", 4, 8, nics=8, nic_gbps=200, network="ib", sharp=True, cpu="amd")
"""CoreWeave HGX A100 (the "a100x128" log, which ran 32 ranks = 4 nodes: busbw/algbw = 2·31/32
in every row, the SHARP lines' "group size:4"): DGX SuperPOD design assumed — 8 HDR NICs
(200 Gb/s) per node, PCIe Gen4, AMD EPYC hosts; SHARP with NCCL_COLLNET_ENABLE=1 (the SHARP
plugin's set-up lines)."""
COREWEAVE_H100_12x8_SHARP = Cluster("H100", 12, 8, nics=8, nic_gbps=400, network="ib", sharp=True, cpu="intel")
"""CoreWeave HGX H100 "H100 with SHARP" (the "h100x64" log, which ran 96 ranks = 12 nodes:
busbw/algbw = 2·95/96).  Assumed: 8 NDR NICs (400 Gb/s) per node, PCIe Gen5, Intel hosts, and
NCCL_COLLNET_ENABLE=1 with SHARP (the source names the job "H100 with SHARP")."""
GB200_NVL72_1 = Cluster("GB200", 1, 72, nics=72, nic_gbps=400, network="ib", cpu="arm")
"""One GB200 NVL72 rack: 72 GPUs in one NVLink domain (one NCCL node), 18 NVLink 5 links each;
Grace (Arm) CPUs; no network involved."""
GB200_NVL72_2 = Cluster("GB200", 2, 64, nics=64, nic_gbps=400, network="ib", sharp=True, cpu="arm")
"""2 GB200 NVL72 racks (the "gb200x144" log, which ran 128 ranks: busbw/algbw = 2·127/128;
64 GPUs per rack assumed): one 400 Gb/s NIC per GPU (NVIDIA's GB200 compute tray: 4 ConnectX-7
per 4 GPUs, assumed), reached over C2C and PCIe Gen5; Quantum-X800 InfiniBand with SHARP and
CollNet on (README)."""
GB200_NVL72_20 = Cluster("GB200", 20, 72, nics=72, nic_gbps=400, network="ib", sharp=True, cpu="arm")
"""20 GB200 NVL72 racks, 1,440 GPUs, as :data:`GB200_NVL72_2` with 72 GPUs per rack."""
PRESETS = {"a3mega-2x8": A3_MEGA_2x8, "coreweave-a100-4x8-sharp": COREWEAVE_A100_4x8_SHARP,
           "coreweave-h100-12x8-sharp": COREWEAVE_H100_12x8_SHARP, "gb200-nvl72-1": GB200_NVL72_1,
           "gb200-nvl72-2": GB200_NVL72_2, "gb200-nvl72-20": GB200_NVL72_20}
LOG_PRESETS = {
    "multinode/h100x16_gcp_a3mega_tcpxo_allreduce.log": "a3mega-2x8",
    "multinode/a100x128_coreweave_ib_sharp_allreduce.log": "coreweave-a100-4x8-sharp",
    "multinode/h100x64_coreweave_ib_sharp_allreduce.log": "coreweave-h100-12x8-sharp",
    "multinode/gb200x72_coreweave_nvl72_1rack_nccl2.26.2_allreduce.log": "gb200-nvl72-1",
    "multinode/gb200x144_coreweave_nvl72_2racks_nccl2.26.2_allreduce.log": "gb200-nvl72-2",
    "multinode/gb200x1440_coreweave_nvl72_20racks_nccl2.26.2_allreduce.log": "gb200-nvl72-20",
}
"""Which preset each multi-node log ran on (code/commbook/data/measured/nccl-tests/PROVENANCE.md)."""
