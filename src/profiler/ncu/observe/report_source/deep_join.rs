//! The deep pass's report files joined into one index by launch key: the deep pass of one capture
//! (its workers' files, each read for its own names, and an older run's top-up file), or several
//! ranks' deep passes pooled across run directories.

use std::path::Path;
use std::sync::Mutex;

use crate::error::Result;
use crate::profiler::ncu::readers::report_file::{ReportFile, SessionInfo};
use crate::profiler::ncu::readers::siblings::{kept_names, topup_sibling, worker_siblings};
use crate::region::KernelFilter;

use super::reader::FileReader;
use super::twins::{TwinIndex, TwinIndexBuilder};
use super::unreadable;
use super::ReportSource;

impl ReportSource<'_> {
    /// The deep pass of one capture, indexed by launch key, with the deep results of its top-up pass
    /// (`NAME.topup.ncu-rep` beside it: the later launches of the keys that needed more samples), and
    /// how many results the top-up pass gave. A deep pass that wrote no report file (it failed, or
    /// was stopped) gives no twins: every result keeps its time alone. Its keys are numbered from
    /// `base`.
    pub(crate) fn twins(
        &self,
        deep: &Path,
        rank: Option<u32>,
        filter: &Mutex<KernelFilter>,
        base: u64,
    ) -> Result<(TwinIndex, u64)> {
        self.twins_of(&[(deep, rank)], filter, base)
    }

    /// The deep results of several deep passes (each with its top-up pass) pooled by launch key:
    /// the ranks of one job that each ran their own deep pass, joined across run directories.
    pub(crate) fn twins_of(
        &self,
        deeps: &[(&Path, Option<u32>)],
        filter: &Mutex<KernelFilter>,
        base: u64,
    ) -> Result<(TwinIndex, u64)> {
        let mut builder = TwinIndexBuilder::default();
        let mut topup_results = 0;
        let mut unread = Vec::new();
        let mut session = None;
        // A deep pass run as several workers: each one's file holds its own names' results. The
        // workers are this run's own: deep passes joined from other ranks' runs ran as one each.
        let own = deeps.len() == 1;
        let commands: &[Vec<String>] = if own {
            &self.context.deep_worker_commands
        } else {
            &[]
        };
        let mut workers = if own {
            self.context.deep_workers.clone()
        } else {
            Vec::new()
        };
        for &(deep, rank) in deeps {
            // A deep file found unreadable when the source opened is left out (`unreadable`).
            let readable = deep.is_file() && !self.left_out.iter().any(|(p, _)| p == deep);
            if readable {
                let only = commands.first().and_then(|c| kept_names(c));
                let read = self.read_deep(deep, rank, filter, &mut builder, only)?.1;
                session.get_or_insert(read);
            }
            if let Some(first) = workers.first_mut() {
                first.results = builder.results();
            }
            for (at, worker) in worker_siblings(deep).iter().enumerate() {
                // One worker's damaged file costs its own keys' deep metrics, not the others'.
                if let Some(error) = unreadable::unreadable(worker, self.max_block) {
                    unread.push(unreadable::leave_out(worker, &error));
                    continue;
                }
                let only = commands.get(at + 1).and_then(|c| kept_names(c));
                let before = builder.results();
                let (_, worker_session) =
                    self.read_deep(worker, rank, filter, &mut builder, only)?;
                session.get_or_insert(worker_session);
                if let Some(recorded) = workers.get_mut(at + 1) {
                    recorded.results = builder.results() - before;
                }
            }
            if !readable {
                continue;
            }
            // The top-up pass only adds samples: a file of it that cannot be read is left out,
            // never the deep pass's results with it.
            if let Some(topup) = topup_sibling(deep) {
                let mut with_topup = builder.clone();
                match self.read_deep(&topup, rank, filter, &mut with_topup, None) {
                    Ok((results, _)) => {
                        builder = with_topup;
                        topup_results += results;
                    }
                    Err(e) => {
                        unread.push(format!(
                            "The top-up pass's report file {} could not be read ({e}); the deep metrics come from the deep pass alone.",
                            topup.display()
                        ));
                    }
                }
            }
        }
        let mut index = builder.finish(base);
        index.unread = unread;
        index.session = session;
        index.workers = workers;
        Ok((index, topup_results))
    }

    /// One deep (or top-up, or deep worker's) report file's results into `builder`, only those of
    /// the names `only` matches where given; how many it had, and its session.
    fn read_deep(
        &self,
        file: &Path,
        rank: Option<u32>,
        filter: &Mutex<KernelFilter>,
        builder: &mut TwinIndexBuilder,
        only: Option<regex::Regex>,
    ) -> Result<(u64, SessionInfo)> {
        let mut reader = FileReader::new(self, rank, filter, None);
        reader.taking_only(only);
        let mut report = ReportFile::open_limited(file, self.max_block)?;
        report.for_each_result(|r| reader.deep_result(r, builder))?;
        Ok((reader.counts.results, report.session().clone()))
    }
}
