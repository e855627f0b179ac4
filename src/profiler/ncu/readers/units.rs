//! Unit normalisation: ncu scales units for humans (`us`, `Mbyte`, `Ghz`) unless exported with
//! `--print-units base`; the report always carries base units, so scaled values are converted back.
//! The base names are the ones ncu 2025.3.1 prints with `--print-units base` (seen on an H200): `ns`,
//! `byte`, `hz`, `byte/block`, `cycle`, `%`. Report files store no units: [`base_unit_of`] names a
//! metric's base unit from its name, as ncu prints it.

/// A unit and the factor that turns a value in it into the base unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Normalized {
    pub unit: String,
    pub factor: f64,
}

const TIME: &[(&str, f64)] = &[
    ("nsecond", 1.0),
    ("ns", 1.0),
    ("usecond", 1e3),
    ("us", 1e3),
    ("msecond", 1e6),
    ("ms", 1e6),
    ("second", 1e9),
    ("s", 1e9),
];
const BYTES: &[(&str, f64)] = &[
    ("byte", 1.0),
    ("Kbyte", 1e3),
    ("Mbyte", 1e6),
    ("Gbyte", 1e9),
    ("Tbyte", 1e12),
    ("Pbyte", 1e15),
];
const FREQUENCY: &[(&str, f64)] = &[
    ("hz", 1.0),
    ("Hz", 1.0),
    ("Khz", 1e3),
    ("KHz", 1e3),
    ("Mhz", 1e6),
    ("MHz", 1e6),
    ("Ghz", 1e9),
    ("GHz", 1e9),
];

fn lookup(part: &str) -> Option<(&'static str, f64)> {
    for (table, base) in [(TIME, "ns"), (BYTES, "byte"), (FREQUENCY, "hz")] {
        if let Some((_, f)) = table.iter().find(|(u, _)| *u == part) {
            return Some((base, *f));
        }
    }
    None
}

/// `us` → (`ns`, 1000); `Kbyte/block` → (`byte/block`, 1000); `Gbyte/second` → (`byte/second`,
/// 1e9); unknown units (`cycle`, `%`, `warp`) come back unchanged with factor 1.
pub fn normalize(unit: &str) -> Normalized {
    let unit = unit.trim();
    let (numerator, rest) = match unit.split_once('/') {
        Some((n, d)) => (n, Some(d)),
        None => (unit, None),
    };
    let Some((base, factor)) = lookup(numerator) else {
        return Normalized {
            unit: unit.to_string(),
            factor: 1.0,
        };
    };
    // A time denominator (`byte/usecond`) divides: 1 byte/usecond = 1e-3 byte/nsecond.
    let (denominator, denom_factor) = match rest {
        Some(d) => match TIME.iter().find(|(u, _)| *u == d) {
            Some((_, f)) => ("ns".to_string(), *f),
            None => (d.to_string(), 1.0),
        },
        None => (String::new(), 1.0),
    };
    let unit = if rest.is_some() {
        format!("{base}/{denominator}")
    } else {
        base.to_string()
    };
    Normalized {
        unit,
        factor: factor / denom_factor,
    }
}

/// Units of the launch attributes ncu gives one (the rest are plain numbers or text).
const LAUNCH_UNITS: &[(&str, &str)] = &[
    ("launch__block_dim_x", "block"),
    ("launch__block_dim_y", "block"),
    ("launch__block_dim_z", "block"),
    ("launch__cluster_max_active", "cluster"),
    ("launch__cluster_max_potential_size", "block"),
    ("launch__occupancy_limit_barriers", "block"),
    ("launch__occupancy_limit_blocks", "block"),
    ("launch__occupancy_limit_registers", "block"),
    ("launch__occupancy_limit_shared_mem", "block"),
    ("launch__occupancy_limit_warps", "block"),
    ("launch__persisting_l2_cache_size", "byte"),
    ("launch__registers_per_thread", "register/thread"),
    ("launch__registers_per_thread_allocated", "register/thread"),
    ("launch__shared_mem_config_size", "byte"),
    ("launch__shared_mem_per_block", "byte/block"),
    ("launch__shared_mem_per_block_allocated", "byte/block"),
    ("launch__shared_mem_per_block_driver", "byte/block"),
    ("launch__shared_mem_per_block_dynamic", "byte/block"),
    ("launch__shared_mem_per_block_static", "byte/block"),
    ("launch__sm_count", "SM"),
    ("launch__thread_count", "thread"),
];

/// Unit-less families: device, link and NUMA attributes.
const PLAIN_PREFIXES: &[&str] = &["device__", "nvlink__", "numa__", "c2clink__"];

/// The base unit ncu prints for a metric (`--print-units base`), derived from the metric's name: a
/// report file stores no units (ncu takes them from its metrics library). The rules, in order:
/// device/link/NUMA attributes have none; launch attributes come from `LAUNCH_UNITS` (`_pct` ones
/// are `%`, the rest none); `.pct_of_peak_*`, `.pct` and `_pct` are `%`; `.per_second` is the
/// counter's unit per second (`cycle` per second is `hz`); `.per_cycle_*` the counter's unit per
/// cycle; otherwise the counter's unit: `gpu__time_duration` is `ns`, then by what the counter counts
/// (`cycles`, `bytes`, `warps`, `inst_executed`/`inst_issued`, `sectors`, `requests`, `threads`,
/// `passes`). A name none of these rules knows gets no unit rather than a guess.
pub fn base_unit_of(metric: &str) -> String {
    if PLAIN_PREFIXES.iter().any(|p| metric.starts_with(p)) {
        return String::new();
    }
    if metric.starts_with("launch__") {
        if let Some((_, unit)) = LAUNCH_UNITS.iter().find(|(m, _)| *m == metric) {
            return (*unit).to_string();
        }
        return if metric.ends_with("_pct") { "%" } else { "" }.to_string();
    }
    if metric.contains(".pct_of_peak") || metric.ends_with(".pct") || metric.ends_with("_pct") {
        return "%".to_string();
    }
    let counter = metric.split('.').next().unwrap_or(metric);
    let unit = counter_unit(counter);
    if metric.contains(".per_second") {
        return match unit {
            "cycle" => "hz".to_string(),
            "" => String::new(),
            unit => format!("{unit}/second"),
        };
    }
    if metric.contains(".per_cycle") {
        return if unit.is_empty() {
            String::new()
        } else {
            format!("{unit}/cycle")
        };
    }
    unit.to_string()
}

/// What a counter (the part of a metric name before its first `.`) counts.
fn counter_unit(counter: &str) -> &'static str {
    const BY_WORD: &[(&str, &str)] = &[
        ("__time_duration", "ns"),
        ("cycles", "cycle"),
        ("bytes", "byte"),
        ("warps", "warp"),
        ("inst_executed", "inst"),
        ("inst_issued", "inst"),
        ("sectors", "sector"),
        ("requests", "request"),
        ("threads", "thread"),
        ("replayer_passes", "pass"),
    ];
    BY_WORD
        .iter()
        .find(|(word, _)| counter.contains(word))
        .map_or("", |(_, unit)| unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaled_units_from_real_exports_become_base_units() {
        assert_eq!(
            normalize("us"),
            Normalized {
                unit: "ns".into(),
                factor: 1e3
            }
        );
        assert_eq!(
            normalize("Mbyte"),
            Normalized {
                unit: "byte".into(),
                factor: 1e6
            }
        );
        assert_eq!(
            normalize("Ghz"),
            Normalized {
                unit: "hz".into(),
                factor: 1e9
            }
        );
        assert_eq!(
            normalize("Kbyte/block"),
            Normalized {
                unit: "byte/block".into(),
                factor: 1e3
            }
        );
    }

    #[test]
    fn base_units_follow_metric_names() {
        for (metric, unit) in [
            ("gpu__time_duration.sum", "ns"),
            ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%"),
            ("lts__t_sector_hit_rate.pct", "%"),
            ("sm__maximum_warps_per_active_cycle_pct", "%"),
            ("dram__cycles_elapsed.avg.per_second", "hz"),
            ("dram__bytes_read.sum.per_second", "byte/second"),
            ("sm__inst_executed.avg.per_cycle_active", "inst/cycle"),
            ("smsp__inst_executed.sum", "inst"),
            ("gpc__cycles_elapsed.max", "cycle"),
            ("dram__bytes_read.sum", "byte"),
            ("launch__registers_per_thread", "register/thread"),
            ("launch__grid_size", ""),
            ("launch__occupancy_cluster_pct", "%"),
            ("device__attribute_max_threads_per_block", ""),
            ("profiler__replayer_passes", "pass"),
            ("made_up__metric.sum", ""),
        ] {
            assert_eq!(base_unit_of(metric), unit, "{metric}");
        }
    }

    #[test]
    fn base_and_unknown_units_are_unchanged() {
        for unit in ["ns", "nsecond", "cycle", "%", "register/thread", "", "byte"] {
            assert_eq!(normalize(unit).factor, 1.0, "{unit}");
        }
        assert_eq!(normalize("cycle").unit, "cycle");
    }
}
