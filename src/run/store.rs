//! Run directories: where one run keeps everything it captured, named so that two runs never collide
//! and an existing directory is never reused.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::report::write::write_atomic;

/// ncu's `-o` value; ncu appends `.ncu-rep`.
pub const REPORT_BASE: &str = "profile";

// Every file name in a run directory is declared here, once (the profilers name them through these).
/// The configuration the run was made with (`report` of the directory starts from it).
pub const CONFIG_FILE: &str = "config.yaml";
/// The profiler's command lines, one a line, as a shell would take them.
pub const COMMAND_FILE: &str = "command.txt";
/// The run record ([`super::RunRecord`]).
pub const RECORD_FILE: &str = "run.json";
/// ncu's log.
pub const NCU_LOG: &str = "ncu.log";
/// A sampled run's deep pass: its `-o` value (ncu appends `.ncu-rep`) and its log.
pub const NCU_DEEP_REPORT_BASE: &str = "profile.deep";
pub const NCU_DEEP_LOG: &str = "ncu.deep.log";
/// A rank that is not a deep rank (`pipeline.ncu.sampling.deep_ranks`): the log of its deep-pass
/// step, the workload run unprofiled.
pub const NCU_UNPROFILED_LOG: &str = "unprofiled.log";
/// The report file ncu writes for an `-o` value ([`REPORT_BASE`], [`NCU_DEEP_REPORT_BASE`]).
pub fn ncu_report_file(base: &str) -> String {
    format!("{base}.ncu-rep")
}
/// Where ncu's `--page PAGE` CSV export goes: `export_PAGE.csv` (`export_PAGE.N.csv` beside an
/// existing one, see [`fresh_path`]).
pub fn ncu_export_stem(page: &str) -> String {
    format!("export_{page}")
}
/// The log the Neuron workload's (or `capture`'s) output goes to.
pub const NEURON_LOG: &str = "neuron.log";
/// `NEURON_RT_INSPECT_OUTPUT_DIR` of an inspect-mode run.
pub const NEURON_INSPECT_DIR: &str = "inspect";
/// The session file Neuron's `capture -s` is given.
pub const NEURON_SESSION: &str = "profile.ntff";
/// The list of viewed Neuron profiles, and where `view` writes them.
pub const NEURON_VIEWS_MANIFEST: &str = "neuron-views.json";
pub const NEURON_VIEWS_DIR: &str = "views";

/// Launcher variables that carry the global rank, in order of preference.
const RANK_VARS: &[&str] = &[
    "RANK",
    "SLURM_PROCID",
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
    "LOCAL_RANK",
];

/// Launcher variables that carry the number of ranks, in the order of [`RANK_VARS`].
const WORLD_VARS: &[&str] = &[
    "WORLD_SIZE",
    "SLURM_NTASKS",
    "OMPI_COMM_WORLD_SIZE",
    "PMI_SIZE",
    "LOCAL_WORLD_SIZE",
];

/// This process's rank under a launcher, and which variable said so.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rank {
    pub rank: u32,
    pub source: String,
    /// How many ranks the launcher started (the variable beside `source`'s: `WORLD_SIZE` for
    /// `RANK`, …), so that `merge` can tell a rank that is missing; `null` when not set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub world_size: Option<u32>,
}

pub fn detect_rank(env: &dyn Fn(&str) -> Option<String>) -> Option<Rank> {
    RANK_VARS.iter().zip(WORLD_VARS).find_map(|(var, world)| {
        let value = env(var)?;
        Some(Rank {
            rank: value.trim().parse().ok()?,
            source: var.to_string(),
            world_size: env(world).and_then(|w| w.trim().parse().ok()),
        })
    })
}

/// A job id every rank of one launch shares, when the launcher provides one, and the variables it
/// came from.
fn shared_job_id(env: &dyn Fn(&str) -> Option<String>) -> Option<(String, &'static str)> {
    if let Some(job) = env("SLURM_JOB_ID") {
        return Some(match env("SLURM_STEP_ID") {
            Some(step) => (
                format!("slurm-{job}.{step}"),
                "SLURM_JOB_ID and SLURM_STEP_ID",
            ),
            None => (format!("slurm-{job}"), "SLURM_JOB_ID"),
        });
    }
    env("TORCHELASTIC_RUN_ID")
        .filter(|id| id != "none" && !id.is_empty())
        .map(|id| (format!("torchrun-{id}"), "TORCHELASTIC_RUN_ID"))
}

/// The longest run name, in bytes: the longest directory name most file systems take (`NAME_MAX`).
const RUN_NAME_LIMIT: usize = 255;

/// A run name is one directory name under `output.root`: a name holding `/`, or `..`, would put the
/// run directory somewhere else, and an absolute one would ignore `output.root`. One that is blank
/// or holds a control character (a newline, an escape) names a directory no one can find or type,
/// and one past [`RUN_NAME_LIMIT`] bytes cannot be made: both are refused before anything is.
fn one_component(name: String, source: &str) -> Result<String> {
    let fix = "set output.run_name=NAME to one plain name";
    let plain = !name.is_empty() && !name.contains(['/', '\0']) && name != "." && name != "..";
    if !plain {
        return Err(Error::Usage(format!(
            "the run name {name:?} (from {source}) is not one directory name: a run directory goes directly under output.root, so its name may not be empty, `.` or `..`, or hold `/`; {fix}"
        )));
    }
    let why = if name.trim().is_empty() {
        "is blank: a run directory of blanks cannot be told apart in a listing nor typed back"
            .to_string()
    } else if let Some(c) = name.chars().find(|c| c.is_control()) {
        format!("holds the control character {c:?}: a listing or a shell would show the directory's name garbled")
    } else if name.len() > RUN_NAME_LIMIT {
        format!(
            "is {} bytes long, past the {RUN_NAME_LIMIT} bytes a directory name may hold",
            name.len()
        )
    } else {
        return Ok(name);
    };
    let shown: String = name.chars().take(40).collect();
    let cut = if shown.len() < name.len() { "…" } else { "" };
    Err(Error::Usage(format!(
        "the run name {shown:?}{cut} (from {source}) {why}; {fix}"
    )))
}

fn timestamped_name() -> String {
    let now = time::OffsetDateTime::now_utc();
    let stamp = now
        .format(time::macros::format_description!(
            "[year][month][day]-[hour][minute][second]"
        ))
        .expect("static format");
    format!("{stamp}-{:06x}", rand::random::<u32>() & 0xff_ffff)
}

/// The run name and rank for this process: `output.run_name` if set, else the launcher's job id when
/// running as a rank, else a fresh timestamped name. A name that is not one plain directory name
/// (`../x`, `/abs`, `a/b`) is refused, naming the key or variable it came from.
pub fn name_for(
    config: &Config,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(String, Option<Rank>)> {
    let rank = detect_rank(env);
    let name = match (&config.output.run_name, &rank) {
        (Some(name), _) => one_component(name.clone(), "output.run_name")?,
        (None, Some(_)) => match shared_job_id(env) {
            Some((name, source)) => one_component(name, source)?,
            None => timestamped_name(),
        },
        (None, None) => timestamped_name(),
    };
    Ok((name, rank))
}

pub fn planned_path(root: &Path, name: &str, rank: Option<&Rank>) -> PathBuf {
    let dir = root.join(name);
    match rank {
        Some(r) => dir.join(format!("rank{}", r.rank)),
        None => dir,
    }
}

/// `output.root` as an absolute path, resolved against the working directory once, before anything
/// is made under it: every path derived from it (the run directory, the trace directory handed to the
/// workload) stays right when the workload changes directory.
pub fn absolute_root(root: &str) -> Result<PathBuf> {
    std::path::absolute(root).map_err(|e| {
        Error::Usage(format!(
            "output.root `{root}` cannot be resolved to an absolute path ({e}); set output.root=DIR"
        ))
    })
}

/// A created run directory.
#[derive(Debug)]
pub struct RunDir {
    root: PathBuf,
}

impl RunDir {
    /// Creates the directory; fails rather than reuse one that exists. A timestamped name that
    /// collides (two runs in the same second with the same random id) is retried with a new id.
    pub fn create(root: &Path, name: &str, rank: Option<&Rank>) -> Result<RunDir> {
        let parent = match rank {
            Some(_) => root.join(name),
            None => root.to_path_buf(),
        };
        // The shared directory of a launch's ranks may exist already (another rank made it); a link
        // there would put every rank's directory outside output.root.
        if rank.is_some() && std::fs::symlink_metadata(&parent).is_ok_and(|m| m.is_symlink()) {
            return Err(Error::Usage(format!(
                "{} is a symbolic link, and run directories are made only inside output.root; remove it, or choose another output.run_name",
                parent.display()
            )));
        }
        std::fs::create_dir_all(&parent).map_err(|source| Error::Write {
            path: parent.clone(),
            source,
        })?;
        let mut name = name.to_string();
        for attempt in 0..16 {
            let dir = planned_path(root, &name, rank);
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(RunDir { root: dir }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if rank.is_some() || attempt == 15 || !looks_timestamped(&name) {
                        return Err(Error::Usage(format!(
                            "run directory {} already exists and is never overwritten; choose another output.run_name or output.root",
                            dir.display()
                        )));
                    }
                    name = timestamped_name();
                }
                Err(source) => return Err(Error::Write { path: dir, source }),
            }
        }
        unreachable!("the loop returns on its last attempt")
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn path(&self, file: &str) -> PathBuf {
        self.root.join(file)
    }

    pub fn report_base(&self) -> PathBuf {
        self.root.join(REPORT_BASE)
    }

    pub fn report_file(&self) -> PathBuf {
        self.root.join(ncu_report_file(REPORT_BASE))
    }

    pub fn write_text(&self, file: &str, text: &str) -> Result<()> {
        Ok(write_atomic(&self.path(file), text.as_bytes())?)
    }
}

fn looks_timestamped(name: &str) -> bool {
    name.len() == 22 && name.as_bytes()[8] == b'-'
}

/// A path for a new file that does not exist yet: `stem.ext`, else `stem.1.ext`, `stem.2.ext`, …
pub fn fresh_path(dir: &Path, stem: &str, ext: &str) -> PathBuf {
    let first = dir.join(format!("{stem}.{ext}"));
    if !first.exists() {
        return first;
    }
    (1..)
        .map(|i| dir.join(format!("{stem}.{i}.{ext}")))
        .find(|p| !p.exists())
        .expect("some suffix is free")
}

/// A directory `prefix-<timestamp>-<random>` created fresh under `parent` (never an existing one).
pub fn fresh_dir(parent: &Path, prefix: &str) -> Result<PathBuf> {
    std::fs::create_dir_all(parent).map_err(|source| Error::Write {
        path: parent.to_path_buf(),
        source,
    })?;
    loop {
        let dir = parent.join(format!("{prefix}-{}", timestamped_name()));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(source) => return Err(Error::Write { path: dir, source }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DEFAULT_PRESET;

    fn env_of<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    fn config() -> Config {
        serde_yaml::from_str(DEFAULT_PRESET).unwrap()
    }

    #[test]
    fn global_rank_variables_win_over_local_rank() {
        let env = [("LOCAL_RANK", "1"), ("RANK", "5")];
        assert_eq!(
            detect_rank(&env_of(&env)),
            Some(Rank {
                rank: 5,
                source: "RANK".into(),
                world_size: None,
            })
        );
        let env = [("RANK", "5"), ("WORLD_SIZE", "8"), ("SLURM_NTASKS", "16")];
        assert_eq!(detect_rank(&env_of(&env)).unwrap().world_size, Some(8));
        let env = [("SLURM_PROCID", "3")];
        assert_eq!(detect_rank(&env_of(&env)).unwrap().rank, 3);
        assert_eq!(detect_rank(&env_of(&[("OMPI_COMM_WORLD_RANK", "x")])), None);
        assert_eq!(detect_rank(&env_of(&[])), None);
    }

    #[test]
    fn ranks_of_one_launch_share_a_run_directory() {
        let slurm = [
            ("SLURM_PROCID", "1"),
            ("SLURM_JOB_ID", "4242"),
            ("SLURM_STEP_ID", "0"),
        ];
        let (name, rank) = name_for(&config(), &env_of(&slurm)).unwrap();
        assert_eq!(name, "slurm-4242.0");
        let dir = planned_path(Path::new("out"), &name, rank.as_ref());
        assert_eq!(dir, Path::new("out/slurm-4242.0/rank1"));

        let torchrun = [("RANK", "0"), ("TORCHELASTIC_RUN_ID", "abc")];
        assert_eq!(
            name_for(&config(), &env_of(&torchrun)).unwrap().0,
            "torchrun-abc"
        );

        let mut named = config();
        named.output.run_name = Some("mine".into());
        assert_eq!(name_for(&named, &env_of(&torchrun)).unwrap().0, "mine");
    }

    #[test]
    fn a_run_name_is_one_directory_name_or_refused() {
        let mut named = config();
        for bad in ["../escape", "/tmp/abs", "a/b", "..", ".", ""] {
            named.output.run_name = Some(bad.into());
            let err = name_for(&named, &env_of(&[])).unwrap_err().to_string();
            assert!(
                err.contains("output.run_name") && err.contains("not one directory name"),
                "{bad}: {err}"
            );
        }
        let launchers: [&[(&str, &str)]; 3] = [
            &[("RANK", "0"), ("TORCHELASTIC_RUN_ID", "x/../../../tmp")],
            &[("RANK", "0"), ("SLURM_JOB_ID", "../../up")],
            &[
                ("RANK", "0"),
                ("SLURM_JOB_ID", "1"),
                ("SLURM_STEP_ID", "0/../.."),
            ],
        ];
        for env in launchers {
            let err = name_for(&config(), &env_of(env)).unwrap_err().to_string();
            assert!(err.contains("not one directory name"), "{env:?}: {err}");
            let var = env[1].0;
            assert!(err.contains(var), "names {var}: {err}");
        }
        named.output.run_name = Some("run-1.ok".into());
        assert_eq!(name_for(&named, &env_of(&[])).unwrap().0, "run-1.ok");
    }

    #[test]
    fn a_blank_a_control_character_or_a_name_too_long_for_a_directory_is_refused() {
        let mut named = config();
        let long = "n".repeat(300);
        for (bad, why) in [
            (" ", "is blank"),
            ("\n", "is blank"),
            ("run\n1", "control character '\\n'"),
            ("run\u{1b}[31m", "control character '\\u{1b}'"),
            (long.as_str(), "is 300 bytes long, past the 255 bytes"),
        ] {
            named.output.run_name = Some(bad.into());
            let err = name_for(&named, &env_of(&[])).unwrap_err().to_string();
            assert!(
                err.contains("(from output.run_name)") && err.contains(why),
                "{bad:?}: {err}"
            );
            assert!(err.len() < 400, "the name is cut in the message: {err}");
        }
        named.output.run_name = Some("n".repeat(255));
        assert!(name_for(&named, &env_of(&[])).is_ok(), "255 bytes fit");
    }

    #[test]
    fn a_plain_run_gets_a_fresh_timestamped_name() {
        let (a, rank) = name_for(&config(), &env_of(&[])).unwrap();
        assert!(rank.is_none());
        assert!(looks_timestamped(&a), "{a}");
        let b = name_for(&config(), &env_of(&[])).unwrap().0;
        assert_ne!(a, b, "two names never repeat (random id)");
    }

    #[test]
    fn existing_rank_directories_are_never_reused() {
        let root = tempfile::tempdir().unwrap();
        let rank = Rank {
            rank: 0,
            source: "RANK".into(),
            world_size: None,
        };
        let first = RunDir::create(root.path(), "job", Some(&rank)).unwrap();
        assert!(first.root().ends_with("job/rank0"));
        let again = RunDir::create(root.path(), "job", Some(&rank));
        assert!(again.unwrap_err().to_string().contains("never overwritten"));
    }

    #[test]
    fn a_shared_directory_that_is_a_link_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), root.path().join("job")).unwrap();
        let rank = Rank {
            rank: 0,
            source: "RANK".into(),
            world_size: None,
        };
        let err = RunDir::create(root.path(), "job", Some(&rank)).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(std::fs::read_dir(elsewhere.path())
            .unwrap()
            .next()
            .is_none());
    }

    #[test]
    fn exports_get_a_fresh_file_name_instead_of_overwriting() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            fresh_path(dir.path(), "export_raw", "csv"),
            dir.path().join("export_raw.csv")
        );
        std::fs::write(dir.path().join("export_raw.csv"), "x").unwrap();
        assert_eq!(
            fresh_path(dir.path(), "export_raw", "csv"),
            dir.path().join("export_raw.1.csv")
        );
    }
}
