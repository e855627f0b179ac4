//! Decodes a report file with profile-run's native reader and sums one metric over its results
//! (benches/ncu_rep.sh times this against NVIDIA's `ncu_report` module doing the same).
//!
//! Usage: `ncu-rep-sum FILE.ncu-rep[.gz] [METRIC]` (METRIC defaults to `gpu__time_duration.sum`).

use std::path::PathBuf;
use std::process::ExitCode;

use profile_run::profiler::ncu::readers::report_file::{ReportFile, ReportFileError};

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(path) = args.next().map(PathBuf::from) else {
        eprintln!("usage: ncu-rep-sum FILE.ncu-rep [METRIC]");
        return ExitCode::from(2);
    };
    let metric = args.next().map_or_else(
        || "gpu__time_duration.sum".to_owned(),
        |m| m.to_string_lossy().into_owned(),
    );
    match run(&path, &metric) {
        Ok((n, sum)) => {
            println!("results={n} sum={sum}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(5)
        }
    }
}

fn run(path: &std::path::Path, metric: &str) -> Result<(u64, f64), ReportFileError> {
    let mut report = ReportFile::open(path)?;
    let mut sum = 0.0;
    let summary = report.for_each_result(|r| {
        sum += r.metric_f64(metric)?.unwrap_or(0.0);
        Ok::<_, ReportFileError>(())
    })?;
    Ok((summary.results, sum))
}
