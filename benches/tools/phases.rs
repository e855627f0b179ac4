//! Times the two phases of `profile-run report` on the given exports: reading them into the report
//! model (`analyze`) and rendering report.json and report.md (`write_reports`), with the default
//! preset plus any `key=value` overrides. Also prints the peak resident memory (`VmHWM`) after each
//! phase. With `-` as OUT_DIR only the analysis runs (for profiling the reader).
//!
//! ```text
//! cargo run --release --example report-phases -- OUT_DIR export.csv [more.csv …] [key=value …]
//! ```

use std::path::PathBuf;
use std::time::Instant;

use profile_run::analysis::RunContext;
use profile_run::commands::write_reports;
use profile_run::config::{self, ConfigSources};
use profile_run::plan::Plan;
use profile_run::profiler::ncu::observe::source::{analyze_exports, ExportSet};
use profile_run::profiler::ProfilerPlan;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = PathBuf::from(
        args.next()
            .ok_or("usage: report-phases OUT_DIR FILE… [k=v…]")?,
    );
    let (overrides, files): (Vec<String>, Vec<String>) = args.partition(|a| a.contains('='));
    let files: Vec<PathBuf> = files.into_iter().map(PathBuf::from).collect();
    let loaded = config::load(&ConfigSources::with_process_env(Vec::new(), overrides))?;
    let render = out.as_os_str() != "-";
    if render {
        std::fs::create_dir_all(&out)?;
    }
    let start = Instant::now();
    let plan = Plan::new(&loaded.config)?;
    let sets: Vec<ExportSet> = files.into_iter().map(ExportSet::raw_only).collect();
    let ProfilerPlan::Ncu(ncu) = &plan.profiler else {
        return Err("report-phases reads ncu's CSV exports: use an ncu configuration".into());
    };
    let report = analyze_exports(&ncu.reading(), &sets, &RunContext::default())?;
    let analyzed = start.elapsed();
    let analyze_hwm = peak_rss_mib();
    let regions: usize = report.scopes.iter().map(|s| s.regions.len()).sum();
    let kernels: usize = report
        .scopes
        .iter()
        .flat_map(|s| &s.regions)
        .map(|r| r.kernels.len())
        .sum();
    let start = Instant::now();
    if render {
        write_reports(&report, &plan, &out)?;
    }
    let rendered = start.elapsed();
    println!(
        "analyze_s={:.3} render_s={:.3} scopes={} regions={regions} region_kernel_rows={kernels} \
         peak_rss_after_analyze_mib={analyze_hwm} peak_rss_mib={}",
        analyzed.as_secs_f64(),
        rendered.as_secs_f64(),
        report.scopes.len(),
        peak_rss_mib(),
    );
    Ok(())
}

/// `VmHWM` of this process in MiB (0 where /proc is not available).
fn peak_rss_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb / 1024)
}
