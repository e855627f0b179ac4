//! Invariants on arbitrary input: interval unions, collective segments, and readers that return an error
//! rather than panic on damaged files.

use std::path::Path;

use proptest::prelude::*;

use profile_run::profiler::neuron::observe::regions::generate;
use profile_run::profiler::neuron::readers::model::intervals::{length, union};
use profile_run::profiler::neuron::readers::model::{Collective, Instruction, NeuronProfile};
use profile_run::profiler::neuron::readers::{profile_json, summary_json, summary_text};
use profile_run::profiler::neuron::settings::{RegionMethod, RegionSettings};

use super::decoder_json;
use crate::common::fixture;

fn spans() -> impl Strategy<Value = Vec<(u64, u64)>> {
    prop::collection::vec((0u64..200, 0u64..40).prop_map(|(s, d)| (s, s + d)), 0..20)
}

proptest! {
    #[test]
    fn union_covers_exactly_the_points_of_its_inputs(ivs in spans()) {
        let u = union(ivs.clone());
        for w in u.windows(2) {
            prop_assert!(w[0].1 < w[1].0, "not disjoint and sorted: {:?}", u);
        }
        let covered = |t: u64, set: &[(u64, u64)]| set.iter().any(|&(s, e)| s <= t && t < e);
        for t in 0..250 {
            prop_assert_eq!(covered(t, &u), covered(t, &ivs));
        }
        prop_assert!(length(&u) <= ivs.iter().map(|(s, e)| e - s).sum::<u64>());
    }

    #[test]
    fn collective_segments_are_ordered_disjoint_and_inside_the_profile(
        ccs in prop::collection::vec((0u64..1000, 1u64..50, prop::option::of(0u64..30), prop::bool::ANY), 1..12)
    ) {
        let mut p = NeuronProfile {
            instructions: vec![Instruction { start_ns: 0, end_ns: 1100, ..Instruction::default() }],
            ..NeuronProfile::default()
        };
        p.collectives = ccs.iter().map(|&(s, d, lead, gather)| Collective {
            start_ns: s,
            end_ns: s + d,
            trigger_ns: lead.map(|l| s.saturating_sub(l)),
            operation: if gather { "AllGather".into() } else { "AllReduce".into() },
            ..Collective::default()
        }).collect();
        p.collectives.sort_by_key(|c| c.start_ns);
        for (op1, op2) in [(None, None), (Some("AllGather"), Some("AllReduce"))] {
            let mut settings = RegionSettings { method: RegionMethod::Collectives, ..RegionSettings::default() };
            settings.collectives.op_type_1 = op1.map(String::from);
            settings.collectives.op_type_2 = op2.map(String::from);
            let r = generate(&p, &settings);
            for s in &r.spans {
                prop_assert!(s.start_ns <= s.end_ns && s.end_ns <= 1100);
            }
            for w in r.spans.windows(2) {
                prop_assert!(w[0].end_ns <= w[1].start_ns, "overlap: {:?}", r.spans);
            }
            if op1.is_none() {
                // one candidate per collective
                prop_assert_eq!(r.spans.len(), p.collectives.len());
            }
        }
    }

    #[test]
    fn damaged_profiles_are_errors_not_panics(cut in 0usize..26_000, byte in 0u8..128, at in 0usize..26_000) {
        let text = std::fs::read_to_string(decoder_json()).unwrap();
        let mut bytes = text.into_bytes();
        bytes.truncate(cut.min(bytes.len()));
        if !bytes.is_empty() {
            let i = at % bytes.len();
            bytes[i] = byte;
        }
        let damaged = String::from_utf8_lossy(&bytes);
        let _ = profile_json::parse(Path::new("d.json"), &damaged);
        let _ = summary_json::parse(Path::new("d.json"), &damaged);
    }

    #[test]
    fn damaged_summary_text_is_an_error_or_a_summary(cut in 0usize..3_000, byte in 0u8..128, at in 0usize..3_000) {
        let mut bytes = std::fs::read(fixture("neuron/summary.txt")).unwrap();
        bytes.truncate(cut.min(bytes.len()));
        if !bytes.is_empty() {
            let i = at % bytes.len();
            bytes[i] = byte;
        }
        let _ = summary_text::parse(Path::new("d.txt"), &String::from_utf8_lossy(&bytes));
    }
}
