//! The closed sets of the configuration that name an external tool's words (ncu's flag values,
//! its export pages and units) or a rollup: each a serde enum, so a misspelt value fails while the
//! layer is read, with the key, where it was set and the nearest word (`check.rs`, "did you
//! mean"), instead of reaching the tool.

use std::fmt;

use serde::{Deserialize, Serialize};

/// An enum whose variants are exactly the words given, shown and written as those words.
macro_rules! closed_set {
    ($(#[$doc:meta])* $name:ident { $($variant:ident => $word:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
        pub enum $name {
            $(#[serde(rename = $word)] $variant),+
        }

        impl $name {
            /// The word as the configuration and the tool spell it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word),+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

closed_set!(
    /// `pipeline.ncu.sampling.error_scope`: what an adaptive run's `error` bounds, each launch key's
    /// mean or each region's time-weighted mean.
    ErrorScope { Key => "key", Region => "region" }
);
closed_set!(
    /// `pipeline.ncu.sampling.deep_engine`: what collects a sampled run's deep metrics: CUPTI inside
    /// the traced process (`in_process`, in the trace pass itself), ncu's deep pass (`ncu`, a second
    /// launch), or the first where the run is timed by the trace (`auto`).
    DeepEngine { Auto => "auto", InProcess => "in_process", Ncu => "ncu" }
);
closed_set!(
    /// `pipeline.ncu.sampling.graph_kernels`: what measures, in process, the launch keys that run
    /// only inside CUDA graphs (CUPTI's Range Profiler cannot): ncu's deep pass after the trace
    /// pass, limited to their names (`ncu`), or nothing (`unmeasured`: no deep values, noted).
    GraphKernels { Ncu => "ncu", Unmeasured => "unmeasured" }
);
closed_set!(
    /// `--target-processes`.
    TargetProcesses { All => "all", ApplicationOnly => "application-only" }
);
closed_set!(
    /// `--kernel-name-base`: which form of a kernel's name `--kernel-name` matches.
    KernelNameForm { Function => "function", Demangled => "demangled", Mangled => "mangled" }
);
closed_set!(
    /// `--filter-mode`.
    FilterMode { Global => "global", PerGpu => "per-gpu", PerLaunchConfig => "per-launch-config" }
);
closed_set!(
    /// `--clock-control`.
    ClockControl { Base => "base", None => "none", Reset => "reset" }
);
closed_set!(
    /// `--cache-control`.
    CacheControl { All => "all", None => "none" }
);
closed_set!(
    /// `--graph-profiling`: one result per kernel node, or one per CUDA graph.
    GraphProfiling { Node => "node", Graph => "graph" }
);
closed_set!(
    /// `--communicator`.
    Communicator { None => "none", Tcp => "tcp", Shmem => "shmem" }
);
closed_set!(
    /// `--call-stack-type`.
    CallStackType { Native => "native", Python => "python" }
);
closed_set!(
    /// A page of `ncu --import … --csv --page P`.
    ExportPage { Raw => "raw", Details => "details", Source => "source", Session => "session" }
);
closed_set!(
    /// `--print-units` of an export (`base` keeps values unscaled).
    PrintUnits { Base => "base", Auto => "auto" }
);
closed_set!(
    /// A `report.rollups` override: how a metric's values combine across results.
    RollupChoice { Sum => "sum", Mean => "mean", Max => "max", Min => "min", Distinct => "distinct" }
);

#[cfg(test)]
mod tests {
    use crate::config::{load, ConfigSources};

    /// The message for one misspelt override: it must name the key, the words allowed and the one
    /// meant.
    fn refused(assignment: &str) -> String {
        let sources = ConfigSources {
            files: Vec::new(),
            overrides: vec![assignment.to_string()],
            env: Vec::new(),
        };
        match load(&sources) {
            Ok(_) => panic!("{assignment} was accepted"),
            Err(e) => e.to_string(),
        }
    }

    fn assert_suggests(assignment: &str, key: &str, meant: &str) {
        let message = refused(assignment);
        assert!(message.contains(key), "{message}");
        assert!(
            message.contains(&format!("(did you mean `{meant}`?)")),
            "{message}"
        );
    }

    #[test]
    fn a_misspelt_target_processes_names_the_value_meant() {
        let key = "pipeline.ncu.ncu_cli.target_processes";
        assert_suggests(&format!("{key}=application-onyl"), key, "application-only");
    }

    #[test]
    fn a_misspelt_kernel_name_base_names_the_value_meant() {
        let key = "pipeline.ncu.ncu_cli.kernel_name_base";
        assert_suggests(&format!("{key}=manlged"), key, "mangled");
    }

    #[test]
    fn a_misspelt_filter_mode_names_the_value_meant() {
        let key = "pipeline.ncu.ncu_cli.filter_mode";
        assert_suggests(&format!("{key}=per-gpus"), key, "per-gpu");
    }

    #[test]
    fn a_misspelt_clock_control_names_the_value_meant() {
        let key = "pipeline.ncu.ncu_cli.clock_control";
        assert_suggests(&format!("{key}=rest"), key, "reset");
    }

    #[test]
    fn a_misspelt_cache_control_names_the_value_meant() {
        let key = "pipeline.ncu.ncu_cli.cache_control";
        assert_suggests(&format!("{key}=nnoe"), key, "none");
    }

    #[test]
    fn a_misspelt_graph_profiling_names_the_value_meant() {
        let key = "pipeline.ncu.ncu_cli.graph_profiling";
        assert_suggests(&format!("{key}=grahp"), key, "graph");
    }

    #[test]
    fn a_misspelt_communicator_names_the_value_meant() {
        let key = "pipeline.ncu.ncu_cli.communicator";
        assert_suggests(&format!("{key}=shmme"), key, "shmem");
    }

    #[test]
    fn a_misspelt_call_stack_type_names_the_value_meant() {
        let key = "pipeline.ncu.ncu_cli.call_stack_type";
        assert_suggests(&format!("{key}=[native, pyhton]"), key, "python");
    }

    #[test]
    fn a_misspelt_export_page_names_the_value_meant() {
        let key = "pipeline.ncu.export.pages";
        assert_suggests(&format!("{key}=[raw, detials]"), key, "details");
    }

    #[test]
    fn a_misspelt_print_units_names_the_value_meant() {
        let key = "pipeline.ncu.export.print_units";
        assert_suggests(&format!("{key}=bsae"), key, "base");
    }

    #[test]
    fn a_misspelt_rollup_names_the_metric_and_the_value_meant() {
        let key = r#"report.rollups."gpu__time_duration.sum""#;
        assert_suggests(&format!("{key}=maxx"), "report.rollups", "max");
    }

    /// The words are the tool's own: what `config show` writes reads back the same.
    #[test]
    fn every_word_reads_back_as_its_variant() {
        use super::{CallStackType, FilterMode};
        for mode in [
            FilterMode::Global,
            FilterMode::PerGpu,
            FilterMode::PerLaunchConfig,
        ] {
            let text = serde_yaml::to_string(&mode).unwrap();
            assert_eq!(text.trim(), mode.as_str());
            assert_eq!(serde_yaml::from_str::<FilterMode>(&text).unwrap(), mode);
        }
        assert_eq!(CallStackType::Python.to_string(), "python");
    }
}
