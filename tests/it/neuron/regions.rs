//! Region generators on the decoder fixture. The expected spans are worked out by hand from the timeline
//! in tests/fixtures/neuron/README.md (layer L starts at S = 96 µs × L; its attention AllReduce runs
//! S+40..48 µs, triggered at S+38 µs on layers 0 and 2; its MLP AllReduce S+88..96 µs, triggered at
//! S+86 µs on layers 0 and 2; layer 3's MLP runs 24 µs longer).

use profile_run::profiler::neuron::observe::regions::{generate, Selection};
use profile_run::profiler::neuron::readers::profile_json;
use profile_run::profiler::neuron::settings::{CollectiveRegions, RegionMethod, RegionSettings};

use super::decoder_json;

fn spans(settings: &RegionSettings) -> Vec<(String, u64, u64)> {
    let p = profile_json::read(&decoder_json()).unwrap();
    generate(&p, settings)
        .spans
        .into_iter()
        .map(|s| (s.name, s.start_ns, s.end_ns))
        .collect()
}

fn collectives(cfg: CollectiveRegions) -> RegionSettings {
    RegionSettings {
        method: RegionMethod::Collectives,
        collectives: cfg,
        ..RegionSettings::default()
    }
}

fn owned(v: &[(&str, u64, u64)]) -> Vec<(String, u64, u64)> {
    v.iter().map(|(n, s, e)| (n.to_string(), *s, *e)).collect()
}

#[test]
fn every_gap_between_collectives_is_a_segment() {
    // Segment i: end of collective i−1 (profile start for i = 0) to the trigger of collective i, or its
    // start where it has no trigger (layers 1 and 3).
    let got = spans(&collectives(CollectiveRegions::default()));
    assert_eq!(
        got,
        owned(&[
            ("segment[0]", 0, 38_000),        // L0 attention, cut at trigger 38 µs
            ("segment[1]", 48_000, 86_000),   // L0 MLP, cut at trigger 86 µs
            ("segment[2]", 96_000, 136_000),  // L1 attention, no trigger: start 96+40
            ("segment[3]", 144_000, 184_000), // L1 MLP, no trigger: start 96+88
            ("segment[4]", 192_000, 230_000), // L2 attention, trigger 192+38
            ("segment[5]", 240_000, 278_000), // L2 MLP, trigger 192+86
            ("segment[6]", 288_000, 328_000), // L3 attention, start 288+40
            ("segment[7]", 336_000, 400_000), // L3 MLP (24 µs slower), start 288+88+24
        ])
    );
}

#[test]
fn offset_stride_and_count_pick_the_mlp_blocks() {
    // Like the Region Highlighter: Name MLP, Op Type 1/2 AllReduce, Stride 2, Offset 1.
    let cfg = CollectiveRegions {
        name: "MLP".into(),
        op_type_1: Some("AllReduce".into()),
        op_type_2: Some("allreduce".into()),
        stride: 2,
        offset: 1,
        count: None,
    };
    let mlp = owned(&[
        ("MLP[0]", 48_000, 86_000),
        ("MLP[1]", 144_000, 184_000),
        ("MLP[2]", 240_000, 278_000),
        ("MLP[3]", 336_000, 400_000),
    ]);
    assert_eq!(spans(&collectives(cfg.clone())), mlp);
    let two = spans(&collectives(CollectiveRegions {
        count: Some(2),
        ..cfg.clone()
    }));
    assert_eq!(two, mlp[..2].to_vec());
    // An op type that never occurs closes no segment: no regions, and a note saying why.
    let p = profile_json::read(&decoder_json()).unwrap();
    let none = generate(
        &p,
        &collectives(CollectiveRegions {
            op_type_2: Some("AllGather".into()),
            ..cfg
        }),
    );
    assert!(none.spans.is_empty());
    assert!(
        none.notes[0].contains("8 collective(s) gave 0 segment(s)"),
        "{:?}",
        none.notes
    );
}

#[test]
fn a_profile_without_collectives_says_so() {
    let mut p = profile_json::read(&decoder_json()).unwrap();
    p.collectives.clear();
    let r = generate(&p, &collectives(CollectiveRegions::default()));
    assert!(r.spans.is_empty());
    assert!(r.notes[0].contains("no collectives"), "{:?}", r.notes);
}

#[test]
fn hierarchy_cuts_at_the_decoder_layers_by_default_and_at_a_given_depth() {
    let mut settings = RegionSettings {
        method: RegionMethod::Hierarchy,
        ..RegionSettings::default()
    };
    // Each layer's instructions run S+0 .. S+88 µs (the MLP semaphore ends last; layer 3: +24 µs).
    let layer = |l: u64| format!("NeuronLlamaModel/NeuronLlamaDecoderLayer[{l}]");
    let expected: Vec<(String, u64, u64)> = vec![
        (layer(0), 0, 88_000),
        (layer(1), 96_000, 184_000),
        (layer(2), 192_000, 280_000),
        (layer(3), 288_000, 400_000),
    ];
    assert_eq!(spans(&settings), expected);

    // Depth 3: attention S+0..40 µs (its semaphore ends at S+40), MLP S+48..88 µs.
    settings.hierarchy.depth = Some(3);
    let got = spans(&settings);
    assert_eq!(got.len(), 8);
    assert_eq!(
        got[0],
        (format!("{}/NeuronLlamaAttention", layer(0)), 0, 40_000)
    );
    assert_eq!(
        got[7],
        (format!("{}/NeuronLlamaMLP", layer(3)), 336_000, 400_000)
    );

    let p = profile_json::read(&decoder_json()).unwrap();
    let r = generate(&p, &settings);
    assert_eq!(
        r.spans[7].base,
        "NeuronLlamaModel/NeuronLlamaDecoderLayer/NeuronLlamaMLP"
    );
    assert_eq!(r.spans[7].index, 3);
    // 5 instructions of layer 3's MLP: the gate/up matmul, two NKI, the down matmul, the semaphore
    assert!(matches!(&r.spans[7].selection, Selection::Instructions(m) if m.len() == 5));

    settings.hierarchy.depth = Some(4);
    let r = generate(&p, &settings);
    assert!(
        r.spans.is_empty() && r.notes[0].contains("no stack reaches depth 4"),
        "{:?}",
        r.notes
    );
}

#[test]
fn stack_frames_find_each_nki_kernel_invocation() {
    let mut settings = RegionSettings {
        method: RegionMethod::StackFrames,
        ..RegionSettings::default()
    };
    // Depth 0 is the kernel entry `mlp_kernel.fused_mlp` (frame 1, parent of frames 3 and 4): its
    // Vector (S+64..72 µs) and Scalar (S+66..74 µs) instructions form one invocation per layer.
    assert_eq!(
        spans(&settings),
        owned(&[
            ("mlp_kernel.fused_mlp[0]", 64_000, 74_000),
            ("mlp_kernel.fused_mlp[1]", 160_000, 170_000),
            ("mlp_kernel.fused_mlp[2]", 256_000, 266_000),
            ("mlp_kernel.fused_mlp[3]", 352_000, 362_000),
        ])
    );
    // Depth 1: the two sub-functions, each its own invocation.
    settings.stack_frames.depth = 1;
    let got = spans(&settings);
    assert_eq!(got.len(), 8);
    assert_eq!(
        got[0],
        ("mlp_kernel.gate_up[0]".to_string(), 64_000, 72_000)
    );
    assert_eq!(got[1], ("mlp_kernel.silu[0]".to_string(), 66_000, 74_000));

    let mut p = profile_json::read(&decoder_json()).unwrap();
    p.instructions
        .iter_mut()
        .for_each(|i| i.stack_frame_ids.clear());
    let r = generate(&p, &settings);
    assert!(
        r.spans.is_empty() && r.notes[0].contains("NKI stack frames"),
        "{:?}",
        r.notes
    );
}

#[test]
fn method_none_gives_no_regions_and_no_note() {
    let p = profile_json::read(&decoder_json()).unwrap();
    let r = generate(
        &p,
        &RegionSettings {
            method: RegionMethod::None,
            ..RegionSettings::default()
        },
    );
    assert!(r.spans.is_empty() && r.notes.is_empty());
}

#[test]
fn hierarchy_without_layer_paths_cuts_along_hlo_instruction_names() {
    let mut p = profile_json::read(&decoder_json()).unwrap();
    for ins in &mut p.instructions {
        ins.layer = None;
    }
    let settings = RegionSettings {
        method: RegionMethod::Hierarchy,
        ..RegionSettings::default()
    };
    let r = generate(&p, &settings);
    // 7 of each layer's 11 instructions carry an HLO line (not the semaphores, not the NKI ones)
    assert_eq!(r.spans.len(), 28, "{:?}", r.notes);
    let find = |name: &str| r.spans.iter().find(|s| s.name == name).unwrap();
    assert_eq!((find("dot.1").start_ns, find("dot.1").end_ns), (0, 16_000));
    // layer 3's slow down projection, `%dot.37 = dot(%act, %wd)`: 36 µs from S+74 µs
    assert_eq!(
        (find("dot.37").start_ns, find("dot.37").end_ns),
        (362_000, 398_000)
    );
    assert!(r
        .spans
        .iter()
        .all(|s| matches!(&s.selection, Selection::Instructions(i) if i.len() == 1)));
}
