//! report.html's view of how a sampled run's deep pass ran: each rank's coverage where the run
//! chose deep ranks, and each worker where the deep pass ran as several profiler processes (what it
//! was given and what it took), as text.

use serde::Serialize;

use crate::report::format::{count, share, value};
use crate::report::model::Sampling;

#[derive(Serialize)]
pub(super) struct DeepPassView {
    pub ranks: Vec<RankRow>,
    pub workers: Vec<WorkerRow>,
}

#[derive(Serialize)]
pub(super) struct RankRow {
    pub rank: u32,
    pub deep_pass: &'static str,
    pub time: String,
    pub on_itself: String,
    pub from_another: String,
    pub none: String,
}

#[derive(Serialize)]
pub(super) struct WorkerRow {
    pub source: String,
    pub gpu: String,
    pub count: u32,
    pub keys: String,
    pub results: String,
    pub ended: String,
}

/// `None` for a run with neither rank coverage nor workers to show.
pub(super) fn view(sampling: &Sampling) -> Option<DeepPassView> {
    if sampling.ranks.is_empty() && sampling.deep_workers.is_empty() {
        return None;
    }
    let ranks = sampling
        .ranks
        .iter()
        .map(|r| RankRow {
            rank: r.rank,
            deep_pass: if r.deep_rank { "ran" } else { "unprofiled" },
            time: value(Some(r.time), "ns"),
            on_itself: share(Some(r.on_itself_share)),
            from_another: share(Some(r.on_another_rank_share)),
            none: share(Some(r.none_share)),
        })
        .collect();
    let workers = sampling
        .deep_workers
        .iter()
        .map(|w| {
            // A worker run as configured (the first pass's launches unread) had no plan.
            let planned = w.keys > 0 || w.expected_results > 0;
            WorkerRow {
                source: w.source.clone(),
                gpu: gpu(w.gpu.as_deref(), w.devices.as_deref()),
                count: w.count,
                keys: if planned {
                    count(w.keys as f64)
                } else {
                    "—".into()
                },
                results: match planned {
                    true => format!(
                        "{} of {}",
                        count(w.results as f64),
                        count(w.expected_results as f64)
                    ),
                    false => format!("{} (not planned)", count(w.results as f64)),
                },
                ended: ended(w.ended_well, w.rerun, w.rerun_of),
            }
        })
        .collect();
    Some(DeepPassView { ranks, workers })
}

/// Where a worker ran: its own GPU, the devices it profiled (a rank's turn), or the workload's own.
fn gpu(gpu: Option<&str>, devices: Option<&str>) -> String {
    match (gpu, devices) {
        (Some(gpu), _) => gpu.to_string(),
        (None, Some(devices)) => format!("the workload's own, profiling device {devices}"),
        (None, None) => "the workload's own".to_string(),
    }
}

/// How a worker ended, with its second try or the worker whose names it took again.
fn ended(well: bool, rerun: bool, rerun_of: Option<usize>) -> String {
    let how = if well { "ended well" } else { "failed" };
    match (rerun, rerun_of) {
        (_, Some(of)) => format!("{how} (names worker {of} never profiled)"),
        (true, None) => format!("{how} on its second try, alone"),
        (false, None) => how.to_string(),
    }
}
