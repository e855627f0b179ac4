//! ncu's own labels for its metrics ("Compute (SM) Throughput" for
//! `sm__throughput.avg.pct_of_peak_sustained_elapsed`): read from the section layouts of a report file
//! when it has them, otherwise from this table of the labels ncu's default sections give.

/// Labels as ncu 2025.3's sections print them (headers of SpeedOfLight, LaunchStats, Occupancy,
/// MemoryWorkloadAnalysis, ComputeWorkloadAnalysis, InstructionStats). The report-file reader checks this
/// table against the labels a real report file carries (tests/it/report_file).
pub const DEFAULT_LABELS: &[(&str, &str)] = &[
    ("gpu__time_duration.sum", "Duration"),
    (
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "Compute (SM) Throughput",
    ),
    (
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
        "Memory Throughput",
    ),
    (
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        "DRAM Throughput",
    ),
    (
        "l1tex__throughput.avg.pct_of_peak_sustained_active",
        "L1/TEX Cache Throughput",
    ),
    (
        "lts__throughput.avg.pct_of_peak_sustained_elapsed",
        "L2 Cache Throughput",
    ),
    ("gpc__cycles_elapsed.max", "Elapsed Cycles"),
    ("sm__cycles_active.avg", "SM Active Cycles"),
    ("gpc__cycles_elapsed.avg.per_second", "SM Frequency"),
    ("dram__cycles_elapsed.avg.per_second", "DRAM Frequency"),
    ("launch__grid_size", "Grid Size"),
    ("launch__block_size", "Block Size"),
    ("launch__registers_per_thread", "Registers Per Thread"),
    ("launch__waves_per_multiprocessor", "Waves Per SM"),
    ("launch__thread_count", "Threads"),
    ("launch__sm_count", "# SMs"),
    (
        "launch__shared_mem_per_block_static",
        "Static Shared Memory Per Block",
    ),
    (
        "launch__shared_mem_per_block_dynamic",
        "Dynamic Shared Memory Per Block",
    ),
    (
        "launch__shared_mem_per_block_driver",
        "Driver Shared Memory Per Block",
    ),
    (
        "launch__shared_mem_config_size",
        "Shared Memory Configuration Size",
    ),
    ("launch__cluster_size", "Cluster Size"),
    (
        "sm__warps_active.avg.pct_of_peak_sustained_active",
        "Achieved Occupancy",
    ),
    (
        "sm__maximum_warps_per_active_cycle_pct",
        "Theoretical Occupancy",
    ),
    ("lts__t_sector_hit_rate.pct", "L2 Hit Rate"),
    ("l1tex__t_sector_hit_rate.pct", "L1/TEX Hit Rate"),
    (
        "sm__inst_executed.avg.per_cycle_active",
        "Executed Ipc Active",
    ),
    ("smsp__inst_executed.sum", "Executed Instructions"),
];

/// The label of `metric`: the report file's own when it gave one, else the table's, else none.
pub fn label(metric: &str, from_file: &[(String, String)]) -> Option<String> {
    from_file
        .iter()
        .find(|(name, _)| name == metric)
        .map(|(_, label)| label.clone())
        .or_else(|| {
            DEFAULT_LABELS
                .iter()
                .find(|(name, _)| *name == metric)
                .map(|(_, label)| label.to_string())
        })
}
