//! `profile-run report|merge INPUT...`: captures already on disk (run directories, exports, report
//! files, Neuron profiles told apart by content) analysed again, into a fresh or `--force`d directory.
//! A run directory is re-rendered with the configuration it recorded (`config.yaml`), with the
//! command's own `--config` files and overrides on top; other inputs with the command's alone.

use crate::cli::ReportArgs;
use crate::error::{exit, Error, Result};
use crate::plan::Plan;
use crate::profiler::neuron;
use crate::run;

use super::{load_config, print_selection_notes, print_stdout, write_reports};

pub fn report_command(args: ReportArgs) -> Result<i32> {
    let (input_paths, mut config_args) = args.split();
    if let Some(recorded) = recorded_config(&input_paths) {
        config_args.configs.insert(0, recorded);
    }
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
    let report =
        crate::profiler::ncu::inputs::analyze_inputs(&plan, &loaded.config, &inputs, &context)?;
    // Created only now, so a failed analysis leaves no empty directory behind.
    let (out, _claim) = out.into_dir(inputs.run_dir.as_deref())?;
    let md = write_reports(&report, &plan, &out)?;
    print_selection_notes(&report);
    print_stdout(&md.display().to_string())?;
    Ok(exit::OK)
}

/// The configuration the first run directory among the inputs recorded (its own `config.yaml`, or
/// its first rank's), said on stderr; `None` when no input is a run directory. Merged runs were
/// profiled alike, so the first stands for all; one recorded differently is named.
fn recorded_config(inputs: &[std::path::PathBuf]) -> Option<std::path::PathBuf> {
    let recorded: Vec<std::path::PathBuf> = inputs
        .iter()
        .filter(|p| p.is_dir())
        .filter_map(|dir| {
            let own = dir.join("config.yaml");
            if own.is_file() {
                return Some(own);
            }
            let mut ranks: Vec<_> = std::fs::read_dir(dir)
                .ok()?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("rank"))
                        && p.join("config.yaml").is_file()
                })
                .collect();
            ranks.sort();
            ranks.first().map(|r| r.join("config.yaml"))
        })
        .collect();
    let first = recorded.first()?.clone();
    let text = |p: &std::path::Path| std::fs::read_to_string(p).unwrap_or_default();
    for other in recorded.iter().skip(1).filter(|p| text(p) != text(&first)) {
        crate::console::err_line(&format!(
            "note: {} differs from {}; the report uses the first (give --config or overrides to change it)",
            other.display(),
            first.display()
        ));
    }
    crate::console::err_line(&format!(
        "note: using the configuration recorded in {} (--config files and overrides apply on top)",
        first.display()
    ));
    Some(first)
}
