//! Neuron regions nested by the region core ([`crate::region::nest`]): a `layer_summary` path's
//! parent is the region of its longest prefix, and a parent's exclusive value of each metric follows
//! the metric's rollup ([`rollup_of`]): sums and times lose what the children hold, time shares are
//! re-weighted over the time left, and the ratios derived per region are recomputed here from the
//! exclusive sums by the same formulas as for a whole region (docs/neuron.md).

use std::collections::HashMap;

use super::metrics::{derived_bytes, div};
use super::report_region::TIME_METRIC;
use super::units::{rollup_of, UnitRow};
use crate::region::{nest as nest_regions, MetricSpec, WholeRegion};
use crate::report::model::Region;

/// Sets each region's parent and depth, its own instruction count and its exclusive values.
pub fn nest(regions: &mut [Region], units: &[UnitRow]) {
    let specs: Vec<MetricSpec> = units
        .iter()
        .map(|(name, unit, _)| MetricSpec {
            name: name.to_string(),
            unit: unit.to_string(),
            rollup: rollup_of(name, unit),
        })
        .collect();
    let time = specs.iter().position(|s| s.name == TIME_METRIC);
    let values: Vec<Vec<Option<f64>>> = regions
        .iter()
        .map(|r| {
            specs
                .iter()
                .map(|s| r.inclusive.get(&s.name).and_then(|v| v.value))
                .collect()
        })
        .collect();
    let whole: Vec<WholeRegion> = regions
        .iter()
        .zip(&values)
        .map(|(r, inclusive)| WholeRegion {
            kind: r.kind,
            segments: &r.segments,
            inclusive,
        })
        .collect();
    let nested = nest_regions(&specs, time, &whole);
    let paths: Vec<String> = regions.iter().map(|r| r.path.clone()).collect();
    let counts: Vec<u64> = regions.iter().map(|r| r.kernel_count).collect();
    for (r, n) in regions.iter_mut().zip(nested) {
        r.depth = n.depth;
        r.parent = n.parent.map(|p| paths[p].clone());
        if n.children.is_empty() {
            continue;
        }
        let inner: u64 = n.children.iter().map(|&c| counts[c]).sum();
        r.self_kernel_count = r.kernel_count.saturating_sub(inner);
        let mut own: HashMap<&str, Option<f64>> = specs
            .iter()
            .map(|s| s.name.as_str())
            .zip(n.exclusive)
            .collect();
        recompute_ratios(&mut own, units);
        let balance = r.inclusive.get(BALANCE).and_then(|v| v.value);
        own.insert(BALANCE, balance);
        for (name, value) in &mut r.exclusive.0 {
            value.value = own.get(&**name).copied().flatten();
        }
    }
}

/// The ratios a region's metrics derive from its sums (docs/neuron.md), recomputed from a parent's
/// exclusive sums; the machine's balance point is every region's. Values are in report units.
fn recompute_ratios(own: &mut HashMap<&str, Option<f64>>, units: &[UnitRow]) {
    let g = |own: &HashMap<&str, Option<f64>>, k: &str| own.get(k).copied().flatten();
    let factor = |k: &str| units.iter().find(|u| &*u.0 == k).map_or(1.0, |u| u.2);
    let mut derived: Vec<(&'static str, Option<f64>)> = Vec::new();
    {
        let mut put = |k: &str, v: Option<f64>| {
            if let Some(name) = RATIOS.iter().find(|n| **n == k) {
                derived.push((name, v.map(|v| v * factor(k))));
            }
        };
        derived_bytes(
            &mut put,
            g(own, "hbm_read_bytes"),
            g(own, "spill_reload_bytes"),
            g(own, "sbuf_write_bytes"),
            g(own, "spill_save_bytes"),
            g(own, "sbuf_read_bytes"),
        );
        let bytes = g(own, "hbm_read_bytes")
            .zip(g(own, "hbm_write_bytes"))
            .map(|(r, w)| r + w);
        put(
            "mm_arithmetic_intensity",
            div(g(own, "hardware_flops"), bytes),
        );
        put(
            "dma_transfer_average_bytes",
            div(
                g(own, "dma_transfer_total_bytes"),
                g(own, "dma_transfer_count"),
            ),
        );
    }
    for (name, value) in derived {
        own.insert(name, value);
    }
}

/// The machine's compute/memory balance point: the same in every part of a region.
const BALANCE: &str = "peak_flops_bandwidth_ratio";

/// The derived metrics a parent's exclusive sums give again.
const RATIOS: [&str; 5] = [
    "useful_read_percent",
    "sbuf_reload_ratio",
    "sbuf_save_ratio",
    "mm_arithmetic_intensity",
    "dma_transfer_average_bytes",
];
