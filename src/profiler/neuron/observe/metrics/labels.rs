//! Readable labels of Neuron's metrics (name → label), for tables and charts that show a label beside
//! or instead of the metric's name. Every metric of [`super::REGION_METRICS`] and
//! [`super::SUMMARY_ONLY_METRICS`] has one (a test checks it).

/// Metric name → label, in report order.
pub const METRIC_LABELS: &[(&str, &str)] = &[
    ("total_time", "Time"),
    ("total_active_time", "Active time"),
    ("active_time_percent", "Active"),
    ("tensor_engine_active_time_percent", "Tensor engine busy"),
    ("vector_engine_active_time_percent", "Vector engine busy"),
    ("scalar_engine_active_time_percent", "Scalar engine busy"),
    ("gpsimd_engine_active_time_percent", "GpSimd engine busy"),
    ("sync_engine_active_time_percent", "Sync engine busy"),
    ("hardware_flops", "Hardware FLOPs"),
    ("transpose_flops", "Transpose FLOPs"),
    ("model_flops", "Model FLOPs"),
    ("mfu_estimated_percent", "MFU (estimated)"),
    ("hfu_estimated_percent", "HFU (estimated)"),
    ("mbu_estimated_percent", "MBU (estimated)"),
    ("mm_arithmetic_intensity", "Arithmetic intensity"),
    ("peak_flops_bandwidth_ratio", "Machine balance"),
    ("hbm_read_bytes", "HBM read"),
    ("hbm_write_bytes", "HBM written"),
    ("sbuf_read_bytes", "SBUF read"),
    ("sbuf_write_bytes", "SBUF written"),
    ("spill_save_bytes", "Spilled to HBM"),
    ("spill_reload_bytes", "Reloaded from HBM"),
    ("useful_read_percent", "Useful HBM reads"),
    ("sbuf_reload_ratio", "SBUF writes that are reloads"),
    ("sbuf_save_ratio", "SBUF reads that are spills"),
    ("dma_wait_time", "DMA wait"),
    ("dma_wait_percent", "DMA wait share"),
    ("dma_transfer_count", "DMA transfers"),
    ("dma_transfer_total_bytes", "DMA bytes"),
    ("dma_transfer_average_bytes", "DMA bytes per transfer"),
    ("cc_op_count", "Collectives"),
    ("cc_op_active_time", "Collective time"),
    ("cc_op_time_percent", "Collective time share"),
    ("duration_vs_group_median", "Time vs group median"),
    (
        "cc_op_time_vs_group_median",
        "Collective time vs group median",
    ),
    ("weight_size_bytes", "Weights"),
    ("weight_queue_bytes", "Weights queued"),
    ("dma_active_time_percent", "DMA active"),
    // Printed by the text summary (and some JSON summaries) though no region metric derives them.
    ("dma_active_time", "DMA active time"),
    (
        "throttle_avg_util_limit_nc0_percent",
        "Throttling, utilization limit (NC0)",
    ),
    (
        "throttle_avg_power_limit_nc0_percent",
        "Throttling, power limit (NC0)",
    ),
];

/// The label of a metric, if it has one.
pub fn label(name: &str) -> Option<&'static str> {
    METRIC_LABELS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, l)| *l)
}

#[cfg(test)]
mod tests {
    use super::super::{REGION_METRICS, SUMMARY_ONLY_METRICS};
    use super::label;

    #[test]
    fn every_metric_has_a_label() {
        let names = REGION_METRICS
            .iter()
            .map(|d| d.name)
            .chain(SUMMARY_ONLY_METRICS.iter().copied());
        for name in names {
            assert!(label(name).is_some(), "{name} has no label");
        }
    }
}
