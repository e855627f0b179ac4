//! `NeuronCli`: the argv and environment of `neuron-explorer capture` and `view`, built without spawning
//! anything. Flags come in a fixed order, values are separate arguments and never pass through a shell.
//! The program is `pipeline.neuron.executable`, or the fallback (`neuron-profile`) when only that one is
//! on PATH; `/opt/aws/neuron/bin` is searched too, and put on the tool's PATH because the tools call
//! each other from there.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::profiler::neuron::capture::pipeline::{NeuronPipeline, ViewFormat};
use crate::profiler::neuron::error::{NeuronError, NeuronResult as Result};

/// Where the Neuron tools are installed.
pub const NEURON_BIN: &str = "/opt/aws/neuron/bin";

/// One `neuron-explorer` command.
#[derive(Debug, Clone, PartialEq)]
pub struct NeuronCli {
    program: PathBuf,
    args: Vec<OsString>,
    env: Vec<(String, OsString)>,
}

/// What `view` reads: a NEFF with its NTFF, or a capture session directory.
#[derive(Debug, Clone, PartialEq)]
pub enum ViewInput {
    Pair { neff: PathBuf, ntff: PathBuf },
    Session(PathBuf),
}

/// An executable file named `name` in one of the `PATH` directories or in [`NEURON_BIN`].
pub fn find_program(name: &str, path_env: Option<&OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if name.contains('/') {
        return Some(PathBuf::from(name));
    }
    let dirs = path_env
        .map(|p| std::env::split_paths(p).collect::<Vec<_>>())
        .unwrap_or_default();
    dirs.into_iter()
        .chain(std::iter::once(PathBuf::from(NEURON_BIN)))
        .map(|d| d.join(name))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The configured executable, else the fallback, else an error saying what to install or set.
pub fn resolve_program(pipeline: &NeuronPipeline, path_env: Option<&OsStr>) -> Result<PathBuf> {
    find_program(&pipeline.executable, path_env)
        .or_else(|| find_program(&pipeline.fallback_executable, path_env))
        .ok_or_else(|| NeuronError::ToolNotFound {
            tried: vec![
                pipeline.executable.clone(),
                pipeline.fallback_executable.clone(),
            ],
        })
}

/// `PATH` with [`NEURON_BIN`] appended when missing.
pub fn path_with_neuron_bin(path_env: Option<&OsStr>) -> OsString {
    let mut dirs: Vec<PathBuf> = path_env
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default();
    if !dirs.iter().any(|d| d == Path::new(NEURON_BIN)) {
        dirs.push(NEURON_BIN.into());
    }
    std::env::join_paths(dirs).unwrap_or_else(|_| OsString::from(NEURON_BIN))
}

/// The NTFF files `capture -s SESSION` writes: `--profile-nth-exec N` adds `_exec_N`, several workers
/// (`ranks`) add `_rank_<i>` before it.
pub fn capture_outputs(session: &Path, nth_exec: Option<u32>, ranks: Option<u32>) -> Vec<PathBuf> {
    let stem = session
        .file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let exec = nth_exec.map_or(String::new(), |n| format!("_exec_{n}"));
    let names: Vec<String> = match ranks {
        Some(r) if r > 1 => (0..r)
            .map(|i| format!("{stem}_rank_{i}{exec}.ntff"))
            .collect(),
        _ if exec.is_empty() => return vec![session.to_path_buf()],
        _ => vec![format!("{stem}{exec}.ntff")],
    };
    names
        .into_iter()
        .map(|n| session.with_file_name(n))
        .collect()
}

/// What `view --output-file OUT` left behind: `OUT` itself, else `OUT@latest`, else the one
/// `*@latest` directory beside it (Parquet output is a `<name>@latest/` directory of tables).
pub fn view_output(out: &Path) -> Option<PathBuf> {
    if out.exists() {
        return Some(out.to_path_buf());
    }
    let mut latest = out.as_os_str().to_owned();
    latest.push("@latest");
    let latest = PathBuf::from(latest);
    if latest.is_dir() {
        return Some(latest);
    }
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let found: Vec<PathBuf> = std::fs::read_dir(parent)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir() && p.to_string_lossy().ends_with("@latest"))
        .collect();
    match found.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

impl NeuronCli {
    /// `capture -n NEFF -s SESSION [--profile-nth-exec N] [--num-exec N] [-r N]
    /// [--collectives-worker-count N] [--ignore-exec-errors] EXTRA…`
    pub fn capture(
        program: &Path,
        pipeline: &NeuronPipeline,
        neff: &Path,
        session: &Path,
    ) -> NeuronCli {
        let c = &pipeline.capture;
        let mut args: Vec<OsString> = vec![
            "capture".into(),
            "-n".into(),
            neff.into(),
            "-s".into(),
            session.into(),
        ];
        let mut opt = |flag: &str, v: Option<u32>| {
            if let Some(v) = v {
                args.push(flag.into());
                args.push(v.to_string().into());
            }
        };
        opt("--profile-nth-exec", c.profile_nth_exec);
        opt("--num-exec", c.num_exec);
        opt("-r", c.workers_per_node);
        opt("--collectives-worker-count", c.worker_count);
        if c.ignore_exec_errors {
            args.push("--ignore-exec-errors".into());
        }
        args.extend(c.extra_args.iter().map(OsString::from));
        NeuronCli {
            program: program.into(),
            args,
            env: Vec::new(),
        }
    }

    /// `view -n NEFF -s NTFF | -d SESSION --output-format FORMAT --output-file OUT EXTRA…`, with the
    /// environment `view` needs: `HOME` must be set (an error otherwise) and PATH gets [`NEURON_BIN`].
    pub fn view(
        program: &Path,
        pipeline: &NeuronPipeline,
        input: &ViewInput,
        format: ViewFormat,
        output: &Path,
        home: Option<&OsStr>,
        path_env: Option<&OsStr>,
    ) -> Result<NeuronCli> {
        let home = home.filter(|h| !h.is_empty()).ok_or(NeuronError::NoHome)?;
        let mut args: Vec<OsString> = vec!["view".into()];
        match input {
            ViewInput::Pair { neff, ntff } => {
                args.extend(["-n".into(), neff.into(), "-s".into(), ntff.into()]);
            }
            ViewInput::Session(dir) => args.extend(["-d".into(), dir.into()]),
        }
        args.extend([
            "--output-format".into(),
            format.as_arg().into(),
            "--output-file".into(),
            output.into(),
        ]);
        args.extend(pipeline.view.extra_args.iter().map(OsString::from));
        let env = vec![
            ("HOME".to_string(), home.to_owned()),
            ("PATH".to_string(), path_with_neuron_bin(path_env)),
        ];
        Ok(NeuronCli {
            program: program.into(),
            args,
            env,
        })
    }

    pub fn program(&self) -> &Path {
        &self.program
    }

    /// The arguments without the program (lossy for display; [`expression`](Self::expression) is exact).
    pub fn argv(&self) -> Vec<String> {
        self.args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    /// The arguments without the program, verbatim.
    pub fn args_os(&self) -> &[OsString] {
        &self.args
    }

    /// Variables set for the tool on top of the inherited environment.
    pub fn env(&self) -> &[(String, OsString)] {
        &self.env
    }

    /// The command, ready to run: no shell, each argument verbatim, the environment above set.
    pub fn expression(&self) -> duct::Expression {
        self.env
            .iter()
            .fold(duct::cmd(&self.program, &self.args), |e, (k, v)| {
                e.env(k, v)
            })
    }

    /// The command line quoted for a POSIX shell (logs, `--dry-run`).
    pub fn shell_line(&self) -> String {
        let mut words = vec![self.program.to_string_lossy().into_owned()];
        words.extend(self.argv());
        shell_words::join(words)
    }
}
