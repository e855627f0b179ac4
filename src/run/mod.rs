//! Where a run lives on disk: the run directory and its files (`store`), the run record (`record`),
//! finding captures again for `report` / `merge` (`inputs`), and where a report is written (`out`).
//!
//! Layout: `<output.root>/<run name>/` holds the profiler's capture (`profile.ncu-rep`), its log
//! (`ncu.log`), `command.txt`, `config.yaml`, `run.json`, the exports (`export_raw.csv`,
//! `export_details.csv`), `report.md` and `report.json`. Under a launcher every rank writes the same
//! files into `<output.root>/<run name>/rank<N>/`.

mod inputs;
mod out;
mod record;
mod store;

pub use inputs::{resolve_inputs, sibling_details, Inputs};
pub use out::ReportOut;
pub use record::{PassRecord, RunRecord};
pub use store::{
    detect_rank, fresh_dir, fresh_path, name_for, planned_path, Rank, RunDir, REPORT_BASE,
};
