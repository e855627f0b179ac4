//! `profile-run report|merge INPUT...`: captures already on disk (run directories, exports, report
//! files, Neuron profiles told apart by content) analysed again under the current configuration, into a
//! fresh or `--force`d directory.

use crate::cli::ReportArgs;
use crate::error::{exit, Error, Result};
use crate::plan::Plan;
use crate::profiler::ncu::report_source::analyze_report_files;
use crate::profiler::ncu::source::analyze_exports;
use crate::profiler::neuron;
use crate::run;

use super::{load_config, print_selection_notes, print_stdout, write_reports};

pub fn report_command(args: ReportArgs) -> Result<i32> {
    let (input_paths, config_args) = args.split();
    let loaded = load_config(&config_args)?;
    let plan = Plan::new(&loaded.config)?;
    if input_paths.is_empty() {
        return Err(Error::Usage(
            "no input given; name a run directory, a `--page raw` CSV export, an .ncu-rep or a Neuron profile".into(),
        ));
    }
    let mut out = run::ReportOut::new(args.out.clone(), args.force, &loaded.config.output.root)?;
    if let Some(neuron) =
        neuron::capture::inputs::resolve_inputs(&input_paths, &loaded.config, &mut || {
            out.bare_export_dir()
        })?
    {
        let mut context = neuron.context.clone();
        context.config_fingerprint = loaded.fingerprint();
        let report = neuron::report::report(&loaded.config, &neuron.viewed, &context)?;
        let (out, _claim) = out.into_dir(neuron.run_dir.as_deref())?;
        let md = write_reports(&report, &plan, &out)?;
        print_stdout(&md.display().to_string())?;
        return Ok(exit::OK);
    }
    let inputs =
        crate::profiler::ncu::inputs::resolve_inputs(&input_paths, &loaded.config, &mut || {
            out.bare_export_dir()
        })?;
    let mut context = inputs.context.clone();
    context.config_fingerprint = loaded.fingerprint();
    let report = if inputs.reports.is_empty() {
        analyze_exports(&plan, &inputs.exports, &context)?
    } else {
        analyze_report_files(&plan, &inputs.reports, &context)?
    };
    // Created only now, so a failed analysis leaves no empty directory behind.
    let (out, _claim) = out.into_dir(inputs.run_dir.as_deref())?;
    let md = write_reports(&report, &plan, &out)?;
    print_selection_notes(&report);
    print_stdout(&md.display().to_string())?;
    Ok(exit::OK)
}
