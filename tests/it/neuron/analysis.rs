//! Metrics, insights, distribution and comparison on the decoder fixture with the shipped rules. Every
//! expected number is worked out by hand from the timeline in tests/fixtures/neuron/README.md; the
//! arithmetic is in the comments.

use profile_run::insights::RuleSet;
use profile_run::profiler::neuron::observe::metrics::vocabulary;
use profile_run::profiler::neuron::observe::{analyse, load_rules, Analysis, Bound, NeuronRegion};
use profile_run::profiler::neuron::readers::model::NeuronProfile;
use profile_run::profiler::neuron::readers::{parquet, profile_json, summary_json};
use profile_run::profiler::neuron::settings::{
    CollectiveRegions, InsightSettings, NeuronSettings, RegionMethod,
};
use profile_run::region::RegionFilter;

use super::parquet_gen::{generate, GenOptions};
use super::{decoder_json, MIB};
use crate::common::{fixture, repo};

pub fn shipped_rules() -> RuleSet {
    RuleSet::load(&repo().join("conf/neuron/rules.yaml"), &vocabulary())
        .expect("shipped rules load")
}

#[test]
fn the_built_in_rules_are_the_shipped_file() {
    let built_in = load_rules(&InsightSettings::default()).unwrap();
    assert_eq!(built_in.rules, shipped_rules().rules);
    let custom = InsightSettings {
        rules: Some(repo().join("conf/neuron/missing.yaml")),
        max: 4,
    };
    let err = load_rules(&custom).unwrap_err().to_string();
    assert!(err.contains("conf/neuron/missing.yaml"), "{err}");
}

/// MLP blocks as in the Region Highlighter: AllReduce to AllReduce, stride 2, offset 1.
pub fn mlp_settings() -> NeuronSettings {
    let mut s = NeuronSettings::default();
    s.regions.method = RegionMethod::Collectives;
    s.regions.collectives = CollectiveRegions {
        name: "MLP".into(),
        op_type_1: Some("AllReduce".into()),
        op_type_2: Some("AllReduce".into()),
        stride: 2,
        offset: 1,
        count: None,
    };
    s
}

fn mlp_analysis(settings: &NeuronSettings) -> Analysis {
    let p = profile_json::read(&decoder_json()).unwrap();
    analyse(&p, settings, &shipped_rules(), &RegionFilter::default())
}

fn m(r: &NeuronRegion, k: &str) -> f64 {
    r.metrics
        .get(k)
        .copied()
        .flatten()
        .unwrap_or_else(|| panic!("{}: {k} unknown", r.name))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1e-12)
}

macro_rules! assert_close {
    ($a:expr, $b:expr) => {
        assert!(
            close($a, $b),
            "{} = {} , expected {}",
            stringify!($a),
            $a,
            $b
        )
    };
}

#[test]
fn mlp0_metrics_match_the_hand_computation() {
    let a = mlp_analysis(&mlp_settings());
    let r = &a.regions[0];
    assert_eq!(
        (r.name.as_str(), r.start_ns, r.end_ns),
        ("MLP[0]", 48_000, 86_000)
    );
    // Window 48–86 µs holds instructions 7–10 and the semaphore 84–88 (not busy).
    assert_close!(m(r, "total_time"), 38e-6);
    // busy: 48–64 ∪ 64–72 ∪ 66–74 ∪ 74–86 = 48–86, all of it
    assert_close!(m(r, "total_active_time"), 38e-6);
    assert_close!(m(r, "active_time_percent"), 1.0);
    // tensor: TensorMatrix 48–64 + Tensor 74–86 = 28 µs of 38
    assert_close!(m(r, "tensor_engine_active_time_percent"), 28.0 / 38.0);
    assert_close!(m(r, "vector_engine_active_time_percent"), 8.0 / 38.0);
    assert_close!(m(r, "scalar_engine_active_time_percent"), 8.0 / 38.0);
    assert_close!(m(r, "gpsimd_engine_active_time_percent"), 0.0);
    assert_close!(m(r, "sync_engine_active_time_percent"), 0.0);
    // FLOPs: 0.8 + 0.6 GFLOP, no transposes
    assert_close!(m(r, "hardware_flops"), 1.4e9);
    assert_close!(m(r, "model_flops"), 1.4e9);
    // HBM: read 6 + 4 MiB, write 1 MiB ⇒ AI = 1.4e9 / 11 MiB = 121.4 < 223.78
    assert_close!(m(r, "hbm_read_bytes"), 10.0 * MIB);
    assert_close!(m(r, "mm_arithmetic_intensity"), 1.4e9 / (11.0 * MIB));
    assert_close!(m(r, "peak_flops_bandwidth_ratio"), 223.78);
    assert_eq!(r.bound, Some(Bound::Memory));
    // peak from the summary: 9.6e9 / (0.2477 × 408 µs) FLOP/s ≈ 95 T; MFU = 1.4e9 / (peak × 38 µs) ≈ 0.388
    let peak = 9.6e9 / (0.2477 * 408e-6);
    assert_close!(a.peak_flops.unwrap(), peak);
    assert_close!(m(r, "mfu_estimated_percent"), 1.4e9 / (peak * 38e-6));
    assert!((m(r, "mfu_estimated_percent") - 0.3878).abs() < 1e-4);
    // MBU = 11 MiB / (peak / 223.78 × 38 µs) ≈ 0.715
    assert_close!(
        m(r, "mbu_estimated_percent"),
        11.0 * MIB / (peak / 223.78 * 38e-6)
    );
    // DMA starting in 48–86: 4 MiB at 50 and 1 MiB (spill queue) at 76
    assert_close!(m(r, "dma_transfer_count"), 2.0);
    assert_close!(m(r, "dma_transfer_total_bytes"), 5.0 * MIB);
    assert_close!(m(r, "dma_transfer_average_bytes"), 2.5 * MIB);
    // DMA wait: 12 µs on the gate/up matmul ⇒ 12 / 38
    assert_close!(m(r, "dma_wait_percent"), 12.0 / 38.0);
    // spill: save 0.5, reload 1.5 MiB; SBUF writes 6 + 2 + 2, reads 4 + 2 MiB
    assert_close!(m(r, "sbuf_reload_ratio"), 1.5 / 10.0);
    assert_close!(m(r, "sbuf_save_ratio"), 0.5 / 6.0);
    assert_close!(m(r, "useful_read_percent"), 8.5 / 10.0);
    // no collective overlaps 48–86 (they run 40–48 and 88–96)
    assert_close!(m(r, "cc_op_count"), 0.0);
    assert_close!(m(r, "cc_op_active_time"), 0.0);
    // MLP median duration: (38 + 40) / 2 = 39 µs
    assert_close!(m(r, "duration_vs_group_median"), 38.0 / 39.0);
}

#[test]
fn insights_fire_on_the_hand_computed_values() {
    let a = mlp_analysis(&mlp_settings());
    let ids = |r: &NeuronRegion| {
        r.insights
            .iter()
            .map(|i| i.rule.clone())
            .collect::<Vec<_>>()
    };
    // MLP[0]: DMA wait 31.6 % > 15 % (high); AI 121.4 < 223.78 (medium 70); MFU/active = 0.388 / 1.0
    // < 0.5 (medium 60). TE 73.7 % ≥ 70 % does not fire; reload/HBM read = 1.5/10 < 0.25.
    assert_eq!(
        ids(&a.regions[0]),
        ["dma_wait", "memory_bound", "low_mfu_while_active"]
    );
    let dma = &a.regions[0].insights[0];
    assert_eq!(dma.message, "Engines wait on DMA for 31.6% of the time");
    assert_eq!(dma.evidence.len(), 1);
    assert_close!(dma.evidence[0].value, 12.0 / 38.0);
    // MLP[3] (336–400 µs): DMA wait 12/64 = 18.75 %; memory-bound; MFU = 1.4e9/(peak × 64 µs) = 0.230
    // over active 62/64 = 0.9688 gives 0.238 < 0.5; duration 64/39 = 1.64 × the median > 1.5.
    assert_eq!(
        ids(&a.regions[3]),
        [
            "dma_wait",
            "memory_bound",
            "low_mfu_while_active",
            "slow_instance"
        ]
    );
    assert_close!(m(&a.regions[3], "duration_vs_group_median"), 64.0 / 39.0);

    // Whole profile (the JSON's summary): AI 129.8 < 223.78; TE 60.78 % < 70 %; active 328/408 = 0.804
    // and MFU/active = 0.2477 / 0.804 = 0.308 < 0.5. Reload/read = 6/64 MiB does not fire.
    assert_eq!(a.summaries.len(), 1);
    let s: Vec<&str> = a.summaries[0]
        .insights
        .iter()
        .map(|i| i.rule.as_str())
        .collect();
    assert_eq!(
        s,
        [
            "memory_bound",
            "tensor_engine_underused",
            "low_mfu_while_active"
        ]
    );
    assert_close!(
        a.summaries[0].metrics["active_time_percent"].unwrap(),
        328.0 / 408.0
    );
}

#[test]
fn summary_json_profiles_get_the_summary_viewer_recommendations() {
    let summaries = summary_json::read(&fixture("neuron/summary_two_subgraphs.json")).unwrap();
    let p = NeuronProfile {
        summaries,
        ..NeuronProfile::default()
    };
    let a = analyse(
        &p,
        &NeuronSettings::default(),
        &shipped_rules(),
        &RegionFilter::default(),
    );
    // No timeline: no regions, and the note says why.
    assert!(a.regions.is_empty());
    assert!(
        a.notes.iter().any(|n| n.contains("no collectives")),
        "{:?}",
        a.notes
    );
    let ids = |i: usize| {
        a.summaries[i]
            .insights
            .iter()
            .map(|x| x.rule.clone())
            .collect::<Vec<_>>()
    };
    // n_7cf2…: reload 2 GiB / read 6.13 GiB = 0.326 > 0.25 (high); AI 15.81 < 223.78 (medium 70);
    // TE 44.1 % (65); MFU/active = 0.00489 / (0.2083/0.2138) = 0.005 (60). Also fire but rank lower:
    // weights 4 GiB / 1 GiB = 4 > 2 (45), transposes 1.258/10.486 = 0.12 > 0.10 (low).
    assert_eq!(
        ids(0),
        [
            "spill_reload_heavy",
            "memory_bound",
            "tensor_engine_underused",
            "low_mfu_while_active"
        ]
    );
    assert_eq!(a.summaries[0].bound, Some(Bound::Memory));
    // n_91d0…: AI 312.5 ≥ 223.78 (compute-bound, info); MFU/active = 0.003105/(1.71/1.82) = 0.0033 < 0.5
    assert_eq!(ids(1), ["low_mfu_while_active", "compute_bound"]);
    let mut all = NeuronSettings::default();
    all.insights.max = 10;
    let a = analyse(&p, &all, &shipped_rules(), &RegionFilter::default());
    assert_eq!(a.summaries[0].insights.len(), 6);
    assert_eq!(a.summaries[0].insights[4].rule, "weights_reloaded");
    assert_eq!(a.summaries[0].insights[5].rule, "transpose_heavy");
}

#[test]
fn parquet_gives_the_same_regions_as_json() {
    let tmp = tempfile::tempdir().unwrap();
    generate(&decoder_json(), tmp.path(), &GenOptions::default());
    let pq = parquet::read(tmp.path()).unwrap();
    let settings = mlp_settings();
    let from_pq = analyse(&pq, &settings, &shipped_rules(), &RegionFilter::default());
    let from_js = mlp_analysis(&settings);
    assert_eq!(from_pq.regions, from_js.regions);
}

#[test]
fn the_docs_list_every_metric_and_every_shipped_rule() {
    let doc = std::fs::read_to_string(repo().join("docs/neuron.md")).unwrap();
    for d in profile_run::profiler::neuron::observe::metrics::REGION_METRICS {
        assert!(
            doc.contains(&format!("| `{}` | {} | {} |", d.name, d.unit, d.formula)),
            "{}",
            d.name
        );
    }
    for r in &shipped_rules().rules {
        assert!(
            doc.contains(&format!("| `{}` |", r.id)),
            "rule {} is not in docs/neuron.md",
            r.id
        );
    }
}
