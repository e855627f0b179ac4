//! The cross-rank diagnosis on real 4-GPU traces (tests/fixtures/ncu/h200x4-cupti-straggle): one rank
//! made slow on purpose inside `forward` is named, with its region, and the other ranks' wait is the
//! delay injected, as the workload measured it with CUDA events; an even run names nobody.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

use crate::common::{copy_tree, fixture};

const DIR: &str = "ncu/h200x4-cupti-straggle";

/// A copy of fixture folder `rel` (so nothing lands beside the committed files).
fn copy(rel: &str, into: &Path) -> PathBuf {
    let to = into.join(rel.replace('/', "_"));
    copy_tree(&fixture(&format!("{DIR}/{rel}")), &to);
    to
}

/// `profile-run VERB INPUTS… --out OUT`: report.json and report.md.
fn render(verb: &str, inputs: &[PathBuf], out: &Path) -> (Value, String) {
    Command::cargo_bin("profile-run")
        .unwrap()
        .arg("-q")
        .arg(verb)
        .args(inputs)
        .arg("--out")
        .arg(out)
        .assert()
        .success();
    let json = std::fs::read_to_string(out.join("report.json")).unwrap();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    (serde_json::from_str(&json).unwrap(), md)
}

/// The extra work the straggling rank did in fixture folder `rel`, in ms: the workload's own
/// CUDA-event times (`delays.jsonl`), summed.
pub(crate) fn injected_ms(rel: &str) -> f64 {
    let text = std::fs::read_to_string(fixture(&format!("{DIR}/{rel}/delays.jsonl"))).unwrap();
    let ms: f64 = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .flat_map(|r| r["delay_ms"].as_array().unwrap().clone())
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert!(ms > 0.0, "{rel}: no rank recorded a delay");
    ms
}

/// [`injected_ms`] in ns.
fn injected_ns(rel: &str) -> f64 {
    injected_ms(rel) * 1e6
}

fn within(got: f64, want: f64, tolerance: f64) -> bool {
    (got - want).abs() <= tolerance * want
}

/// Asserts the straggler, its cause and the others' wait against the injected delay.
fn assert_straggler(report: &Value, scope: &str, region: &str, injected: f64) {
    let x = &report["cross_rank"];
    let s = &x["straggler"];
    assert!(
        s["scope"].as_str().unwrap().contains(scope),
        "straggler {} is not {scope}: {}",
        s["scope"],
        x["finding"]
    );
    assert_eq!(s["region"], region, "{}", x["finding"]);
    assert_eq!(
        s["cause"]["region"], "train_step/forward",
        "{}",
        x["finding"]
    );
    let share = s["wait_share"].as_f64().unwrap();
    assert!(
        share > 0.0 && share <= 1.0,
        "a share of the others' time: {share}"
    );
    let wait = s["wait_ns"].as_f64().unwrap();
    assert!(
        within(wait, injected, 0.10),
        "the others wait {wait} ns, injected {injected} ns"
    );
    let excess =
        s["cause"]["time_ns"].as_f64().unwrap() - s["cause"]["median_ns"].as_f64().unwrap();
    assert!(
        within(excess, injected, 0.05),
        "forward runs {excess} ns above the others, injected {injected} ns"
    );
}

/// The diagnosis is the first thing in the Summary, before any scope's lists.
fn assert_first_in_summary(md: &str) {
    let summary = md.find("## Summary").unwrap();
    let across = md.find("**Across ranks:**").expect("an Across ranks line");
    let first_scope = md[summary..].find("\n### ").unwrap() + summary;
    assert!(summary < across && across < first_scope, "{md}");
}

#[test]
fn one_profile_run_around_torchrun_names_the_late_rank_and_its_forward() {
    let tmp = tempfile::tempdir().unwrap();
    let run = copy("ddp-straggle", tmp.path());
    let (report, md) = render("report", &[run], &tmp.path().join("out"));
    assert_straggler(
        &report,
        "device 2",
        "train_step/backward",
        injected_ns("ddp-straggle"),
    );
    assert_eq!(report["cross_rank"]["collectives"], 40);
    assert_eq!(report["cross_rank"]["unmatched"], 0);
    assert_first_in_summary(&md);
    // Each rank's backward section says how much of it was waiting, apart from transfer.
    let rank0 = &report["cross_rank"]["ranks"][0];
    let scope = report["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"] == rank0["scope"])
        .unwrap();
    let backward = scope["regions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == "train_step/backward")
        .unwrap();
    assert_eq!(backward["collectives"]["wait_ns"], rank0["wait_ns"]);
    let forward = scope["regions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == "train_step/forward")
        .unwrap();
    assert!(forward["collectives"].is_null(), "{forward}");
    assert!(md.contains("Collectives launched here: 703"), "{md}");
}

/// The ranks torchrun gave each process (the workload's own record of them), written into each
/// trace's `process` line as the injection library now writes them from the launcher's environment.
fn with_launcher_ranks(run: &Path, rel: &str) {
    let text = std::fs::read_to_string(fixture(&format!("{DIR}/{rel}/delays.jsonl"))).unwrap();
    let rank_of: std::collections::HashMap<u64, u64> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|r| (r["pid"].as_u64().unwrap(), r["rank"].as_u64().unwrap()))
        .collect();
    for entry in std::fs::read_dir(run.join("trace")).unwrap() {
        let path = entry.unwrap().path();
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap()),
            &mut text,
        )
        .unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let fields: Vec<&str> = lines[1].split('\t').collect();
        assert_eq!(fields[0], "process", "{}", lines[1]);
        let pid: u64 = fields[1].parse().unwrap();
        // The launcher process (torchrun's agent) has no rank; its line keeps none.
        if let Some(rank) = rank_of.get(&pid) {
            lines[1] = format!("{}\t{rank}\t{}", fields[..5].join("\t"), rank_of.len());
        }
        let plain = path.with_extension("");
        std::fs::write(&plain, lines.join("\n") + "\n").unwrap();
        std::fs::remove_file(&path).unwrap();
    }
}

#[test]
fn ranks_from_the_launchers_environment_name_the_late_rank_by_its_rank() {
    let tmp = tempfile::tempdir().unwrap();
    let run = copy("ddp-straggle", tmp.path());
    with_launcher_ranks(&run, "ddp-straggle");
    let (report, md) = render("report", &[run], &tmp.path().join("out"));
    let ranks: Vec<&Value> = report["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["rank"])
        .collect();
    assert_eq!(ranks.len(), 4, "{ranks:?}");
    assert!(
        ranks.iter().all(|r| !r.is_null()),
        "every scope has its rank: {ranks:?}"
    );
    assert_straggler(
        &report,
        "rank 2",
        "train_step/backward",
        injected_ns("ddp-straggle"),
    );
    assert!(md.contains("**Across ranks:** rank 2"), "{md}");
}

#[test]
fn a_rank_late_with_no_slower_region_is_named_without_blaming_a_region() {
    // GPT-2 under DDP with no straggler made: rank 0 reaches nearly every all-reduce last, but
    // its regions run as long as the other ranks' (block0 0.2 ms above their median against a
    // wait of over a second). Naming block0 as the cause would send the user to the wrong code.
    let tmp = tempfile::tempdir().unwrap();
    let run = copy("gpt2-ddp-even", tmp.path());
    let (report, md) = render("report", &[run], &tmp.path().join("out"));
    let x = &report["cross_rank"];
    let s = &x["straggler"];
    assert!(s["scope"].as_str().unwrap().ends_with("rank 0"), "{s}");
    assert!(s["cause"].is_null(), "no region explains the wait: {s}");
    assert!(s["wait_ns"].as_f64().unwrap() > 1e9, "{s}");
    let finding = x["finding"].as_str().unwrap();
    assert!(finding.starts_with("rank 0 is late"), "{finding}");
    assert!(
        finding.contains("the delay is outside the traced kernels"),
        "{finding}"
    );
    assert!(md.contains("**Across ranks:** rank 0 is late"), "{md}");
}

#[test]
fn fsdp_waits_in_forward_all_gathers_and_names_the_same_rank() {
    let tmp = tempfile::tempdir().unwrap();
    let run = copy("fsdp-straggle", tmp.path());
    let (report, _) = render("report", &[run], &tmp.path().join("out"));
    assert_straggler(
        &report,
        "device 2",
        "train_step/forward",
        injected_ns("fsdp-straggle"),
    );
    let s = &report["cross_rank"]["straggler"];
    assert!(
        s["collective"].as_str().unwrap().contains("AllGather"),
        "{s}"
    );
}

#[test]
fn an_even_run_names_no_straggler() {
    let tmp = tempfile::tempdir().unwrap();
    let run = copy("ddp-even", tmp.path());
    let (report, md) = render("report", &[run], &tmp.path().join("out"));
    let x = &report["cross_rank"];
    assert!(x["straggler"].is_null(), "{}", x["finding"]);
    assert!(md.contains("**Across ranks:** No rank stands out"), "{md}");
    for rank in x["ranks"].as_array().unwrap() {
        let share = rank["wait_ns"].as_f64().unwrap() / rank["time_ns"].as_f64().unwrap();
        assert!(share < 0.01, "{rank}");
    }
}

#[test]
fn merged_per_rank_runs_name_the_late_rank_by_its_rank() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = copy("ddp-per-rank", tmp.path());
    let (report, _) = render("merge", &[runs], &tmp.path().join("out"));
    assert_straggler(
        &report,
        "rank 2",
        "train_step/backward",
        injected_ns("ddp-per-rank"),
    );
    assert_eq!(report["cross_rank"]["ranks"].as_array().unwrap().len(), 4);
}

#[test]
fn two_nodes_are_put_on_one_clock_and_the_late_rank_is_found_on_the_second() {
    let tmp = tempfile::tempdir().unwrap();
    let nodes = [
        copy("two-nodes/node0", tmp.path()),
        copy("two-nodes/node1", tmp.path()),
    ];
    let (report, _) = render("merge", &nodes, &tmp.path().join("out"));
    let x = &report["cross_rank"];
    assert!(
        x["clock"].as_str().unwrap().starts_with("2 hosts"),
        "{}",
        x["clock"]
    );
    // Ranks of node0 keep their clock; node1's are shifted by one offset.
    let offsets: Vec<i64> = x["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["clock_offset_ns"].as_i64().unwrap())
        .collect();
    assert_eq!(offsets[0], 0);
    assert_eq!(offsets[1], 0);
    assert_eq!(offsets[2], offsets[3]);
    assert_straggler(
        &report,
        "node1, device 1",
        "train_step/backward",
        injected_ns("two-nodes"),
    );
}

#[test]
fn a_missing_rank_and_a_failed_rank_are_flagged_first_never_averaged_in_silently() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = copy("ddp-per-rank", tmp.path());
    std::fs::remove_dir_all(runs.join("rank1")).unwrap();
    let record = runs.join("rank3/run.json");
    let mut run: Value = serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    run["workload_exit_code"] = Value::from(1);
    std::fs::write(&record, run.to_string()).unwrap();
    let (report, md) = render("merge", &[runs], &tmp.path().join("out"));
    let flagged = report["run"]["flagged_ranks"].as_array().unwrap();
    let got: Vec<(u64, &str)> = flagged
        .iter()
        .map(|f| (f["rank"].as_u64().unwrap(), f["why"].as_str().unwrap()))
        .collect();
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0].0, 1);
    assert!(got[0].1.starts_with("missing:"), "{}", got[0].1);
    assert_eq!(got[1], (3, "partial: the workload exited with code 1"));
    let summary = md.find("## Summary").unwrap();
    let flagged_at = md.find("**Ranks flagged:** rank 1 missing").expect(&md);
    assert!(summary < flagged_at && flagged_at < md.find("**Across ranks:**").unwrap());
}

/// The two simulated nodes whose traces record each rank and the world size.
const NODES: &str = "ncu/h200x2-cupti-two-nodes";

#[test]
fn a_node_merged_without_the_other_flags_the_ranks_its_traces_say_are_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let node = |n: &str| {
        let to = tmp.path().join(n);
        copy_tree(&fixture(&format!("{NODES}/{n}")), &to);
        to
    };
    let (node0, node1) = (node("node0"), node("node1"));
    // Alone, node0's directory holds rank 0, but its trace says the launcher started 2 ranks.
    let (report, md) = render(
        "merge",
        std::slice::from_ref(&node0),
        &tmp.path().join("alone"),
    );
    let flagged = report["run"]["flagged_ranks"].as_array().unwrap();
    assert_eq!(flagged.len(), 1, "{flagged:?}");
    assert_eq!(flagged[0]["rank"], 1);
    let why = flagged[0]["why"].as_str().unwrap();
    assert!(
        why.starts_with("missing:") && why.contains("started 2 ranks"),
        "{why}"
    );
    let summary = md.find("## Summary").unwrap();
    let flagged_at = md.find("**Ranks flagged:** rank 1 missing").expect(&md);
    assert!(summary < flagged_at, "{md}");
    // Both nodes: nothing missing, and the late rank is found across the two hosts.
    let (report, _) = render("merge", &[node0, node1], &tmp.path().join("both"));
    assert_eq!(
        report["run"]["flagged_ranks"]
            .as_array()
            .map_or(0, Vec::len),
        0
    );
    let x = &report["cross_rank"];
    assert!(x["clock"].as_str().unwrap().starts_with("2 hosts"), "{x}");
    let text = std::fs::read_to_string(fixture(&format!("{NODES}/delays.jsonl"))).unwrap();
    let injected_ns: f64 = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .flat_map(|r| r["delay_ms"].as_array().unwrap().clone())
        .map(|v| v.as_f64().unwrap() * 1e6)
        .sum();
    assert_straggler(&report, "rank 1", "train_step/backward", injected_ns);
}

#[test]
fn above_eight_ranks_report_md_shows_distributions_and_the_slowest_not_a_column_per_rank() {
    // Twelve ranks from the four real ones: each real rank's run three times under other rank
    // numbers, so rank 2's copies (2, 6, 10) are the slow ones.
    let tmp = tempfile::tempdir().unwrap();
    let real = copy("ddp-per-rank", tmp.path());
    let job = tmp.path().join("job12");
    for r in 0..12u32 {
        let to = job.join(format!("rank{r}"));
        copy_tree(&real.join(format!("rank{}", r % 4)), &to);
        // A process of its own: a byte copy of a rank's run is refused.
        crate::common::retag_traces(&to, 200_000 + u64::from(r));
        let record = to.join("run.json");
        let mut run: Value =
            serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
        run["rank"]["rank"] = Value::from(r);
        std::fs::write(&record, run.to_string()).unwrap();
    }
    let (report, md) = render("merge", &[job], &tmp.path().join("out"));
    assert_eq!(report["scopes"].as_array().unwrap().len(), 12);
    let table = &md[md.find("## Regions by scope").expect(&md)..];
    let table = &table[..table.find("\n## ").unwrap_or(table.len())];
    assert!(
        table.contains("| Region | Scopes | Min | Median | p90 | Max | Slowest | Spread |"),
        "{table}"
    );
    assert!(!table.contains("| rank 11 |"), "{table}");
    let forward = table.lines().find(|l| l.contains("forward")).expect(table);
    // The slowest three are the slow rank's copies.
    for slow in ["rank 2 (", "rank 6 (", "rank 10 ("] {
        assert!(forward.contains(slow), "{forward}");
    }
    assert!(forward.contains("| 12 |"), "{forward}");
    // The diagnosis lists at most eight ranks.
    let across = &md[md.find("**Across ranks:**").unwrap()..md.find("Clocks:").unwrap()];
    assert!(
        across.contains("The 4 other ranks were last to fewer collectives"),
        "{across}"
    );
}

#[test]
fn each_launchers_recipe_traces_into_its_ranks_directory_under_dry_run() {
    let tmp = tempfile::tempdir().unwrap();
    let library = crate::trace::library(tmp.path());
    let root = tmp.path().join("runs");
    // (launcher, the variables it sets for rank 3 of 4, overrides, the run name expected): torchrun
    // and srun name the job themselves; mpirun does not, so its recipe sets output.run_name.
    type Recipe<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a [&'a str], &'a str);
    let recipes: [Recipe; 3] = [
        (
            "torchrun",
            &[
                ("RANK", "3"),
                ("WORLD_SIZE", "4"),
                ("TORCHELASTIC_RUN_ID", "abc"),
            ],
            &[],
            "torchrun-abc",
        ),
        (
            "srun",
            &[
                ("SLURM_PROCID", "3"),
                ("SLURM_NTASKS", "4"),
                ("SLURM_JOB_ID", "4242"),
                ("SLURM_STEP_ID", "0"),
            ],
            &[],
            "slurm-4242.0",
        ),
        (
            "mpirun",
            &[("OMPI_COMM_WORLD_RANK", "3"), ("OMPI_COMM_WORLD_SIZE", "4")],
            &["output.run_name=job"],
            "job",
        ),
    ];
    for (launcher, vars, overrides, run_name) in recipes {
        let out = Command::cargo_bin("profile-run")
            .unwrap()
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .envs(vars.iter().copied())
            .args(["--dry-run", "--config", "ncu/trace"])
            .args(overrides)
            .arg(format!("pipeline.ncu.trace.library={}", library.display()))
            .arg(format!("output.root={}", root.display()))
            .args(["--", "true"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{launcher}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dir = root.join(run_name).join("rank3");
        assert!(
            stdout.contains(&format!("run directory: {}", dir.display())),
            "{launcher}: {stdout}"
        );
        assert!(
            stdout.contains(&format!(
                "PROFILE_RUN_TRACE_DIR={}",
                dir.join("trace").display()
            )),
            "{launcher}: {stdout}"
        );
    }
}
