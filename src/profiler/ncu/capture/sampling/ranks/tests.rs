//! The choice of deep ranks and the refusals around a launcher, on plain values.

use super::*;
use crate::profiler::ncu::observe::launch_key::Shape;
use crate::profiler::ncu::observe::trace::source::ranks::ProcessLaunches;
use crate::run::Rank;

fn process(rank: Option<u32>, device: u32, signature: u64) -> ProcessLaunches {
    ProcessLaunches {
        pid: 100 + device,
        rank,
        world_size: None,
        devices: [device].into(),
        signature,
        keys: 3,
    }
}

#[test]
fn signature_keeps_the_lowest_rank_of_each_group() {
    let signatures: BTreeMap<u32, u64> = [(3, 7), (1, 7), (2, 9), (0, 9)].into();
    assert_eq!(choose(&DeepRanks::Signature, &signatures), [0, 1].into());
    assert_eq!(choose(&DeepRanks::All, &signatures), [0, 1, 2, 3].into());
    assert_eq!(choose(&DeepRanks::List(vec![2]), &signatures), [2].into());
}

#[test]
fn around_a_launcher_the_deep_ranks_devices_go_to_ncu() {
    let four: Vec<_> = (0..4).map(|r| process(Some(r), r, 5)).collect();
    let (step, chosen) = around_launcher(&DeepRanks::Signature, &four).unwrap();
    assert_eq!(step, DeepStep::OnDevices([0].into()));
    assert_eq!(chosen, Some([0].into()));
    // Several chosen ranks take turns, each on its own device.
    let (step, _) = around_launcher(&DeepRanks::List(vec![1, 3]), &four).unwrap();
    assert_eq!(step, DeepStep::InTurns(vec![[1].into(), [3].into()]));
    let (step, chosen) = around_launcher(&DeepRanks::All, &four).unwrap();
    let each: Vec<BTreeSet<u32>> = (0..4).map(|d| [d].into()).collect();
    assert_eq!(step, DeepStep::InTurns(each));
    assert_eq!(chosen.map(|c| c.len()), Some(4));
    let wrong = around_launcher(&DeepRanks::List(vec![7]), &four).unwrap_err();
    assert!(wrong.to_string().contains("names rank 7"), "{wrong}");
}

#[test]
fn ranks_that_share_a_device_index_are_refused_with_the_per_rank_recipe() {
    let shared: Vec<_> = (0..2).map(|r| process(Some(r), 0, 5)).collect();
    let why = around_launcher(&DeepRanks::Signature, &shared)
        .unwrap_err()
        .to_string();
    assert!(why.contains("ranks 0 and 1 both ran on device 0"), "{why}");
    assert!(why.contains("one profile-run per rank"), "{why}");
    assert!(
        !why.contains("deep_ranks=all"),
        "all would stall there: {why}"
    );
    // Every rank chosen: no turns possible, every rank profiled at once (with a warning).
    let (step, _) = around_launcher(&DeepRanks::All, &shared).unwrap();
    assert_eq!(step, DeepStep::AsPlanned);
    // Two chosen ranks of four that share a device index cannot take turns either.
    let mut four: Vec<_> = (0..4).map(|r| process(Some(r), r, 5)).collect();
    four[3].devices = [1].into();
    let why = around_launcher(&DeepRanks::List(vec![1, 3]), &four)
        .unwrap_err()
        .to_string();
    assert!(why.contains("ranks 1 and 3 both ran on device 1"), "{why}");
}

#[test]
fn turns_place_each_planned_worker_once_per_rank_one_after_another() {
    let worker = |count| Worker {
        names: None,
        count,
        keys: 0,
        cost: 0,
    };
    let turns = DeepStep::InTurns(vec![[0].into(), [2].into()]);
    let layout: Vec<(u32, Option<BTreeSet<u32>>)> = placed(vec![worker(1), worker(2)], &turns)
        .into_iter()
        .map(|(w, d)| (w.count, d))
        .collect();
    assert_eq!(
        layout,
        [
            (1, Some([0].into())),
            (2, Some([0].into())),
            (1, Some([2].into())),
            (2, Some([2].into())),
        ]
    );
    assert!(in_turns(&turns));
    assert!(!in_turns(&DeepStep::OnDevices([0, 2].into())));
    let one = placed(vec![worker(1)], &DeepStep::OnDevices([0, 2].into()));
    assert_eq!(one[0].1, Some([0, 2].into()));
    assert_eq!(placed(vec![worker(1)], &DeepStep::AsPlanned)[0].1, None);
}

#[test]
fn processes_without_ranks_are_all_profiled() {
    let unranked = vec![process(None, 0, 5), process(None, 1, 5)];
    let (step, chosen) = around_launcher(&DeepRanks::Signature, &unranked).unwrap();
    assert_eq!((step, chosen), (DeepStep::AsPlanned, None));
}

#[test]
fn per_rank_deep_passes_join_only_as_distinct_ranks() {
    let a = (PathBuf::from("a/profile.deep.ncu-rep"), Some(0));
    let b = (PathBuf::from("b/profile.deep.ncu-rep"), Some(1));
    assert!(check_deep_passes(&[a.clone(), b.clone()]).is_ok());
    assert!(check_deep_passes(&[a.clone(), a.clone()]).is_err());
    let unranked = (PathBuf::from("c/profile.deep.ncu-rep"), None);
    assert!(check_deep_passes(&[a, unranked]).is_err());
    let mut ranks = None;
    count_deep_rank(&mut ranks, 2, false);
    assert_eq!(ranks, Some(vec![]));
    count_deep_rank(&mut ranks, 1, true);
    count_deep_rank(&mut ranks, 0, true);
    assert_eq!(ranks, Some(vec![0, 1]));
}

#[test]
fn the_deep_pass_expects_the_launches_of_the_chosen_devices_alone() {
    let first = || {
        let mut d = LaunchDurations::default();
        for device in 0..4 {
            d.add(
                "_Z4gemm",
                Shape::of_grid(8),
                (10 + device, Some(u64::from(device))),
                5.0,
                &[],
            );
        }
        d
    };
    let processes = |d: &LaunchDurations| -> Vec<u32> {
        d.keys()
            .flat_map(|(_, _, k)| k.per_process().map(|((pid, _), _)| pid))
            .collect()
    };
    let on_two = deep_launches(first(), &DeepStep::OnDevices([2].into()));
    assert_eq!(processes(&on_two), [12]);
    assert_eq!(
        processes(&deep_launches(first(), &DeepStep::AsPlanned)).len(),
        4
    );
    let turns = DeepStep::InTurns(vec![[1].into(), [3].into()]);
    assert_eq!(processes(&deep_launches(first(), &turns)), [11, 13]);
}

#[test]
fn a_deep_rank_of_one_profile_run_per_rank_never_ends_on_its_own() {
    let mut rank = Rank {
        rank: 0,
        source: "RANK".into(),
        world_size: Some(2),
    };
    assert!(
        !ends_alone(Some(&rank), None),
        "its peers run the workload beside its deep pass to the end"
    );
    rank.world_size = Some(1);
    assert!(
        ends_alone(Some(&rank), None),
        "a launch of one rank has no peer to wait"
    );
    assert!(
        ends_alone(None, None),
        "around a launcher every rank ends together"
    );
    assert!(
        !ends_alone(None, Some(8)),
        "ranks on other hosts wait for this node's"
    );
}

#[test]
fn turns_run_one_after_another_and_one_rank_of_a_launch_never_reruns_alone() {
    assert!(in_turns(&DeepStep::InTurns(vec![[0].into(), [1].into()])));
    assert!(!in_turns(&DeepStep::InTurns(vec![[0].into()])));
    assert!(!in_turns(&DeepStep::OnDevices([0].into())));
    let rank = Rank {
        rank: 1,
        source: "RANK".into(),
        world_size: Some(4),
    };
    assert!(
        !ends_alone(Some(&rank), None),
        "its workload alone would wait for its peers"
    );
}

#[test]
fn around_one_nodes_launcher_a_list_is_refused_and_signatures_choose_among_its_own_ranks() {
    // Ranks 4 to 7 of a job of 8 ran here, one per device; the others on another host.
    let node: Vec<_> = (0..4)
        .map(|d| ProcessLaunches {
            world_size: Some(8),
            ..process(Some(4 + d), d, 5)
        })
        .collect();
    let refused = around_launcher(&DeepRanks::List(vec![4]), &node).unwrap_err();
    let text = refused.to_string();
    assert!(
        text.contains("job has 8 ranks and ranks 4,5,6,7 alone"),
        "{text}"
    );
    assert!(text.contains("deep_ranks=signature or all"), "{text}");
    let (step, chosen) = around_launcher(&DeepRanks::Signature, &node).unwrap();
    assert_eq!(step, DeepStep::OnDevices([0].into()));
    assert_eq!(chosen, Some([4].into()));
    let (step, _) = around_launcher(&DeepRanks::All, &node).unwrap();
    assert_eq!(
        step,
        DeepStep::InTurns((0..4).map(|d| [d].into()).collect())
    );
    // Every rank of the job here: a list is the user's to choose, as on one host.
    let whole: Vec<_> = (0..4)
        .map(|d| ProcessLaunches {
            world_size: Some(4),
            ..process(Some(d), d, 5)
        })
        .collect();
    let (step, _) = around_launcher(&DeepRanks::List(vec![2]), &whole).unwrap();
    assert_eq!(step, DeepStep::OnDevices([2].into()));
}
