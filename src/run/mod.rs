//! Where a run lives on disk and how it runs: the run directory and its files (`store`), the run
//! record (`record`) and its one writer (`journal`), the executor of a run's planned passes
//! (`executor`),
//! where a report is written (`out`), the inputs `report` refuses before touching anything
//! (`inputs`, with what an input's name says of it: a compressed CSV export), and every file read
//! from a run directory checked and bounded (`checked`). Each profiler finds its own captures again
//! for `report` / `merge` (`profiler::ncu::inputs`, `profiler::neuron::inputs`).
//!
//! Layout: `<output.root>/<run name>/` holds the profiler's capture (`profile.ncu-rep`), its log
//! (`ncu.log`), `command.txt`, `config.yaml`, `run.json`, the exports (`export_raw.csv`,
//! `export_details.csv`), `report.md` and `report.json`. Under a launcher every rank writes the same
//! files into `<output.root>/<run name>/rank<N>/`. Every one of these names is declared once, in
//! `store` (the profilers name them through it).
//!
//! Floor: run. May import process, analysis, report, config, region and the ground floor.
//! (docs/architecture.md, checked by tests/it/architecture.rs)

mod checked;
mod claim;
mod executor;
mod inputs;
mod journal;
mod out;
mod record;
mod store;

pub use checked::{
    check_in_run, read_record, read_report_json, read_run_text, starts_as_report_json, trace_checks,
};
pub use claim::{Claim, CLAIM_FILE};
pub use executor::{Executor, Line, PassGroup, PassSpec, Ran, Rerun, Stage, Watch};
pub use inputs::{check_readable, check_report_inputs, is_compressed_csv};
pub use journal::{Finding, Journal, Slot};
pub use out::ReportOut;
pub use record::{
    latest_time, DeepRanksRecord, DeepWorkerRecord, PassRecord, RoundRecord, RunRecord,
};
pub use store::{
    absolute_root, detect_rank, fresh_dir, fresh_path, name_for, ncu_export_stem, ncu_report_file,
    planned_path, Rank, RunDir, COMMAND_FILE, CONFIG_FILE, NCU_DEEP_LOG, NCU_DEEP_REPORT_BASE,
    NCU_LOG, NCU_UNPROFILED_LOG, NEURON_INSPECT_DIR, NEURON_LOG, NEURON_SESSION, NEURON_VIEWS_DIR,
    NEURON_VIEWS_MANIFEST, RECORD_FILE, REPORT_BASE,
};
