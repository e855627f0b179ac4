//! How each ncu metric aggregates over the results of a region, inferred from ncu's metric naming.
//!
//! ncu's report API types each metric (counter, ratio, throughput) with a rollup; its names encode the
//! same: `.pct_of_peak_*`, `.per_second`, `.per_cycle_*`, `.ratio` and `%` are rates
//! (duration-weighted means), `launch__*`/`device__*` are attributes of the launch or the device that
//! must never be summed, and every other metric is a counter that adds up across results, whatever
//! its suffix: `.sum`, `.avg`, `.max` and `.min` reduce over the units (SMs, GPCs) inside one kernel,
//! not across kernels, so a region's `gpc__cycles_elapsed.max` is the sum over its kernels of each
//! kernel's slowest GPC. `report.rollups` overrides.

use crate::region::Rollup;

const ATTRIBUTE_PREFIXES: &[&str] = &[
    "launch__",
    "device__",
    "nvlink__",
    "numa__",
    "c2clink__",
    "profiler__",
];

pub fn infer(metric: &str, unit: &str) -> Rollup {
    if ATTRIBUTE_PREFIXES.iter().any(|p| metric.starts_with(p)) {
        return Rollup::Distinct;
    }
    let rate = metric.contains(".pct_of_peak")
        || metric.ends_with(".pct")
        || metric.ends_with("_pct")
        || metric.contains(".per_second")
        || metric.contains(".per_cycle")
        || metric.contains(".per_")
        || metric.ends_with(".ratio")
        || unit == "%";
    if rate {
        Rollup::Mean
    } else {
        Rollup::Sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rollups_follow_metric_names() {
        assert_eq!(infer("gpu__time_duration.sum", "nsecond"), Rollup::Sum);
        assert_eq!(infer("dram__bytes_read.sum", "byte"), Rollup::Sum);
        assert_eq!(
            infer("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%"),
            Rollup::Mean
        );
        assert_eq!(
            infer("dram__cycles_elapsed.avg.per_second", "hz"),
            Rollup::Mean
        );
        assert_eq!(
            infer("smsp__inst_executed.avg.per_cycle_active", "inst/cycle"),
            Rollup::Mean
        );
        assert_eq!(infer("lts__t_sector_hit_rate.pct", "%"), Rollup::Mean);
        // Within-kernel reductions of counters still add up across kernels.
        assert_eq!(infer("gpc__cycles_elapsed.max", "cycle"), Rollup::Sum);
        assert_eq!(infer("sm__cycles_active.min", "cycle"), Rollup::Sum);
        assert_eq!(infer("sm__cycles_active.avg", "cycle"), Rollup::Sum);
        assert_eq!(infer("launch__grid_size", ""), Rollup::Distinct);
        assert_eq!(
            infer("launch__occupancy_limit_warps", "block"),
            Rollup::Distinct
        );
        assert_eq!(
            infer("device__attribute_display_name", ""),
            Rollup::Distinct
        );
    }
}
