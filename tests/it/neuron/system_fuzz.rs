//! The system-profile reader on arbitrary input (run bounded in CI: `.ci/run`): a damaged events
//! table (cut short, a byte changed, a forged footer) is an error, never a panic or a hang; and any
//! events read twice count once, every event landing on exactly one worker.

use std::path::PathBuf;
use std::sync::OnceLock;

use proptest::prelude::*;

use profile_run::profiler::neuron::readers::model::system::{SystemEvent, SystemProfile};
use profile_run::profiler::neuron::readers::parquet::system;

use super::system_gen::training_run;

/// The events table of one process of the generator's training run, as bytes.
fn events_table() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = training_run(tmp.path(), Some(3), true).remove(0);
        std::fs::read(dir.join("SystemProfileEvents.parquet")).unwrap()
    })
}

fn event() -> impl Strategy<Value = SystemEvent> {
    (
        (prop::option::of(0u64..4), 0usize..3, 0u64..400, 0u64..200),
        (
            1u64..3,
            prop::option::of(0u64..2),
            prop::option::of(0u64..3),
        ),
    )
        .prop_map(|((id, name, start, len), (pid, nc, gid))| SystemEvent {
            id,
            name: ["train_step", "nrt_execute", "cc_running"][name].to_string(),
            start_ns: start,
            end_ns: start + len,
            instance_id: "i-1".into(),
            process_id: pid,
            nc_idx: nc,
            worker_gid: gid,
            ..SystemEvent::default()
        })
}

fn part(dir: &str, events: Vec<SystemEvent>) -> SystemProfile {
    SystemProfile {
        sources: vec![PathBuf::from(dir)],
        events,
        ..SystemProfile::default()
    }
}

proptest! {
    #[test]
    fn a_damaged_events_table_is_an_error_or_a_profile(
        cut in 0usize..8_000,
        at in 0usize..8_000,
        byte in any::<u8>(),
        claimed in prop::option::of(any::<u32>()),
    ) {
        let mut bytes = events_table().to_vec();
        bytes.truncate(cut.max(1).min(bytes.len()));
        let i = at % bytes.len();
        bytes[i] = byte;
        if let Some(claimed) = claimed {
            if bytes.len() >= 8 {
                let n = bytes.len();
                bytes[n - 8..n - 4].copy_from_slice(&claimed.to_le_bytes());
                bytes[n - 4..].copy_from_slice(b"PAR1");
            }
        }
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("SystemProfileEvents.parquet"), &bytes).unwrap();
        if let Ok(p) = system::read(tmp.path()) {
            prop_assert!(p.events.iter().all(|e| e.start_ns <= e.end_ns));
        }
    }

    #[test]
    fn events_read_twice_count_once_on_exactly_one_worker(
        events in prop::collection::vec(event(), 0..40),
        twice in prop::collection::vec(any::<prop::sample::Index>(), 0..10),
    ) {
        // one part, some of its rows written twice (a table part repeated)
        let mut with_twins = events.clone();
        with_twins.extend(twice.iter().filter(|_| !events.is_empty()).map(|i| i.get(&events).clone()));
        let once = SystemProfile::merge(vec![part("a", events.clone())]);
        let parts = vec![part("a", with_twins), part("copy", events.clone())];
        let merged = SystemProfile::merge(parts);
        prop_assert_eq!(&merged.events, &once.events);
        let placed: usize = merged.by_worker().values().map(Vec::len).sum();
        prop_assert_eq!(placed, merged.events.len());
        prop_assert!(merged.events.windows(2).all(|w| w[0].start_ns <= w[1].start_ns));
        if !events.is_empty() {
            prop_assert!(merged.notes.iter().any(|n| n.starts_with("`copy` holds the same events as `a`")), "{:?}", merged.notes);
            prop_assert_eq!(merged.sources, vec![PathBuf::from("a")]);
        }
    }
}
