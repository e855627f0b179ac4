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
        .map(|w| WorkerRow {
            source: w.source.clone(),
            gpu: w
                .gpu
                .clone()
                .unwrap_or_else(|| "the workload's own".to_string()),
            count: w.count,
            keys: count(w.keys as f64),
            results: format!(
                "{} of {}",
                count(w.results as f64),
                count(w.expected_results as f64)
            ),
            ended: ended(w.ended_well, w.rerun, w.rerun_of),
        })
        .collect();
    Some(DeepPassView { ranks, workers })
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
