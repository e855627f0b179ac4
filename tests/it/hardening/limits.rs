//! Bounded work on hostile inputs: range stacks thousands of levels deep, block lengths of 4 GiB in
//! gzip'd report files, zero-filled and sparse report files, range names of many megabytes, YAML
//! nested 100,000 levels, a thousand ranks under a small descriptor limit, and region paths longer
//! than a format width. Each case asserts its time or memory bound, not only its message.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::Command;

use super::{code_and_stderr, fixture_records, to_csv};
use crate::common::fixture;

/// The environment variable that hands [`rss_probe`] the command it measures.
const PROBE_ARGS: &str = "RSS_PROBE_ARGS";

/// Runs `profile-run ARGS…` in `dir` from a process of its own (this test binary again, running only
/// [`rss_probe`]), so the peak resident size getrusage reports for its children is that run's alone,
/// not the largest of every test running beside it. Returns the exit code, stderr and peak RSS in MiB.
pub(super) fn run_measured(dir: &Path, args: &[&str]) -> (i32, String, u64) {
    let mut argv = vec![assert_cmd::cargo::cargo_bin("profile-run")
        .display()
        .to_string()];
    argv.extend(args.iter().map(|a| a.to_string()));
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "hardening::limits::rss_probe",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .current_dir(dir)
        .env(PROBE_ARGS, serde_json::to_string(&argv).unwrap())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let field = |name: &str| -> i64 {
        let line = stdout
            .lines()
            .find_map(|l| l.split(&format!("probe {name}=")).nth(1))
            .unwrap_or_else(|| panic!("no {name} from the probe: {stdout}"));
        line.trim().parse().unwrap()
    };
    let stderr = std::fs::read_to_string(dir.join("probe.stderr")).unwrap();
    (
        field("exit") as i32,
        stderr,
        field("maxrss_kib") as u64 / 1024,
    )
}

/// Not a test of its own: the measuring process of [`run_measured`] (skipped without its variable).
#[test]
#[ignore = "run by run_measured, in a process of its own"]
fn rss_probe() {
    let Ok(argv) = std::env::var(PROBE_ARGS) else {
        return;
    };
    let argv: Vec<String> = serde_json::from_str(&argv).unwrap();
    let stderr = std::fs::File::create("probe.stderr").unwrap();
    let status = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .stderr(stderr)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    let usage =
        nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).unwrap();
    println!("probe exit={}", status.code().unwrap_or(-1));
    println!("probe maxrss_kib={}", usage.max_rss());
}

/// The real export with one result whose push/pop stack is `depth` ranges deep (`level0/level1/…`).
pub(super) fn deep_stack_export(depth: usize) -> Vec<u8> {
    let names: Vec<String> = (0..depth).map(|i| format!("level{i}")).collect();
    stack_export(&names)
}

/// The real export with one result whose push/pop stack is `names`, outermost first.
fn stack_export(names: &[String]) -> Vec<u8> {
    let records = fixture_records();
    let push_pop = records[0]
        .iter()
        .position(|h| h.contains("Push/Pop_Range"))
        .unwrap();
    let stack: Vec<String> = names
        .iter()
        .map(|name| format!("\"<default domain>:{name}:none:none:none:none:none:none\""))
        .collect();
    let mut row = records[2].clone();
    row[push_pop] = format!("1606  {} ", stack.join("  "));
    to_csv(&[records[0].clone(), records[1].clone(), row])
}

#[test]
fn a_stack_of_10000_levels_is_refused_naming_the_limit_within_200_mb() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("export.csv"), deep_stack_export(10_000)).unwrap();
    let (code, stderr, peak_mib) =
        run_measured(dir.path(), &["report", "export.csv", "--out", "out"]);
    assert_eq!(code, 5, "{stderr}");
    assert!(
        stderr.contains("10000 levels deep, past regions.max_depth (256)")
            && stderr.contains("regions.max_depth=10000")
            && stderr.contains("export.csv"),
        "{stderr}"
    );
    assert!(peak_mib <= 200, "peak RSS {peak_mib} MiB for 10,000 levels");
    assert!(!dir.path().join("out/report.json").exists());
}

#[test]
fn a_stack_of_2000_levels_builds_its_tree_on_a_small_thread_stack() {
    use profile_run::region::{Cell, MetricSpec, Observation, RegionAccumulator, Rollup, ScopeKey};
    // A test thread has 2 MiB of stack, a quarter of a main thread's: the recursive builder that
    // overflowed on a 2,000-level stack overflowed here far sooner.
    let stack: Vec<String> = (0..2_000).map(|i| format!("level{i}")).collect();
    let specs = vec![MetricSpec {
        name: "time".into(),
        unit: "ns".into(),
        rollup: Rollup::Sum,
    }];
    let key = ScopeKey::default();
    let mut acc = RegionAccumulator::new(specs);
    for depth in [2_000, 1_000, 1] {
        acc.add(&Observation {
            scope: &key,
            stacks: &[stack[..depth].to_vec()],
            instances: None,
            marks: &[],
            call_stack: None,
            kernel: "k",
            time: Some(depth as f64),
            start: None,
            values: &[Cell::Num(depth as f64)],
            coverage: Default::default(),
            weight: None,
            key: None,
        });
    }
    let (scopes, _) = acc.finish(false);
    let regions = &scopes[0].regions;
    assert_eq!(regions.len(), 2_000);
    // Pre-order, outermost first; every level's inclusive time holds the levels below it.
    assert_eq!(regions[0].path.segments, ["level0"]);
    assert_eq!(regions[0].inclusive.time, 3_001.0);
    assert_eq!(regions[999].inclusive.time, 3_000.0);
    assert_eq!(regions[1_000].inclusive.time, 2_000.0);
    assert_eq!(regions[1_999].path.segments.len(), 2_000);
    assert_eq!(regions[1_999].exclusive.time, 2_000.0);
}

/// The first bytes of a real report file: magic, file header; then the first block's length.
fn report_head() -> Vec<u8> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(
            std::fs::File::open(fixture("ncu/h100-2025.3.1-pytorch/rep_apprange.ncu-rep.gz"))
                .unwrap(),
        ),
        &mut bytes,
    )
    .unwrap();
    bytes.truncate(10);
    bytes
}

/// A gzip'd report whose first block says it is 4 GiB long and whose stream really holds 64 MiB
/// of zeros after it: a reader that trusts the length decompresses all of it.
fn gzip_with_huge_block() -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&report_head()).unwrap();
    gz.write_all(&u32::MAX.to_le_bytes()).unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..64 {
        gz.write_all(&zeros).unwrap();
    }
    gz.finish().unwrap()
}

#[test]
fn a_4_gib_block_length_in_a_gzip_report_is_refused_within_a_tenth_of_a_second() {
    use profile_run::profiler::ncu::readers::report_file::{ReportFile, ReportFileError};
    let bytes = gzip_with_huge_block();
    let started = Instant::now();
    let mut report =
        ReportFile::from_reader(Path::new("huge.ncu-rep.gz"), std::io::Cursor::new(bytes)).unwrap();
    let err = report
        .for_each_result(|_| Ok::<_, ReportFileError>(()))
        .unwrap_err();
    let took = started.elapsed();
    assert!(took <= Duration::from_millis(100), "took {took:?}");
    assert_eq!(err.offset(), Some(14), "{err}");
    assert!(
        err.to_string()
            .contains("a block header of 4294967295 bytes is past the limit of 256 MiB"),
        "{err}"
    );
}

#[test]
fn a_4_gib_block_in_a_deep_sibling_is_left_out_naming_it_and_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let timing = dir.path().join("train.ncu-rep.gz");
    std::fs::copy(
        fixture("ncu/h100-2025.3.1-sampled/train.ncu-rep.gz"),
        &timing,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("train.deep.ncu-rep.gz"),
        gzip_with_huge_block(),
    )
    .unwrap();
    let started = Instant::now();
    let (code, stderr) = code_and_stderr(
        Command::cargo_bin("profile-run")
            .unwrap()
            .current_dir(dir.path())
            .args(["report", "train.ncu-rep.gz", "--out", "out"]),
    );
    // The deep sibling is left out, named with the limit and the key on stderr; the timing pass's
    // report stands.
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("train.deep.ncu-rep.gz cannot be read (at byte ")
            && stderr.contains("past the limit of 256 MiB")
            && stderr.contains("pipeline.ncu.max_block_mib"),
        "{stderr}"
    );
    assert!(dir.path().join("out/report.md").is_file());
    // A whole run of the binary (start-up included), with room for a loaded machine.
    assert!(started.elapsed() < Duration::from_secs(5));
    // The limit is a setting: below the block's real size, even the fixture's own blocks are refused.
    let (code, stderr) = code_and_stderr(
        Command::cargo_bin("profile-run")
            .unwrap()
            .current_dir(dir.path())
            .args(["report", "train.ncu-rep.gz", "--out", "out2"])
            .arg("pipeline.ncu.max_block_mib=0"),
    );
    assert_eq!(code, 5, "{stderr}");
    assert!(stderr.contains("past the limit of 0 MiB"), "{stderr}");
}

#[test]
fn a_header_followed_by_zeros_is_refused_not_read_as_an_empty_capture() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = report_head();
    bytes.extend(std::iter::repeat_n(0u8, 4096));
    std::fs::write(dir.path().join("zeros.ncu-rep"), &bytes).unwrap();
    // The same header followed by a 20 GB hole: nothing may scan it.
    let sparse = dir.path().join("sparse.ncu-rep");
    std::fs::write(&sparse, report_head()).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&sparse)
        .unwrap()
        .set_len(20_000_000_000)
        .unwrap();
    for name in ["zeros.ncu-rep", "sparse.ncu-rep"] {
        let started = Instant::now();
        let (code, stderr) = code_and_stderr(
            Command::cargo_bin("profile-run")
                .unwrap()
                .current_dir(dir.path())
                .args(["report", name, "--out", "out"]),
        );
        assert_eq!(code, 5, "{name}: {stderr}");
        assert!(
            stderr.contains(&format!("{name}: damaged report file at byte 14"))
                && stderr.contains("a block header of 0 bytes"),
            "{name}: {stderr}"
        );
        assert!(!stderr.contains("profiled nothing"), "{stderr}");
        assert!(started.elapsed() < Duration::from_secs(5), "{name}");
    }
}

#[test]
fn a_zero_filled_or_sparse_csv_export_is_refused_without_being_scanned() {
    let dir = tempfile::tempdir().unwrap();
    let sparse = |name: &str, head: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, head).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(20_000_000_000)
            .unwrap();
    };
    // Only zeros; the real header and units row followed by a 20 GB hole; a few zero bytes after a
    // complete export (a partly written copy).
    let records = fixture_records();
    let mut head = to_csv(&records[..2]);
    sparse("zeros.csv", b"");
    sparse("hole.csv", &head);
    head = to_csv(&records);
    head.extend([0u8; 16]);
    std::fs::write(dir.path().join("tail.csv"), &head).unwrap();
    for (name, says) in [
        ("zeros.csv", "zeros.csv: the file ends in zero bytes"),
        ("hole.csv", "hole.csv: the file ends in zero bytes"),
        ("tail.csv", "tail.csv: the file ends in zero bytes"),
    ] {
        let started = Instant::now();
        let (code, stderr) = code_and_stderr(
            Command::cargo_bin("profile-run")
                .unwrap()
                .current_dir(dir.path())
                .args(["report", name, "--out", "out"]),
        );
        assert_eq!(code, 5, "{name}: {stderr}");
        assert!(stderr.contains(says), "{name}: {stderr}");
        assert!(started.elapsed() < Duration::from_secs(5), "{name}");
    }
}

#[test]
fn a_csv_line_over_16_mib_before_the_header_is_refused_without_reading_on() {
    let dir = tempfile::tempdir().unwrap();
    // 17 MiB without a line break, then a real export: the search for the header stops at 16 MiB.
    let mut bytes = vec![b'x'; 17 << 20];
    bytes.push(b'\n');
    bytes.extend(to_csv(&fixture_records()));
    std::fs::write(dir.path().join("long.csv"), bytes).unwrap();
    let (code, stderr) = code_and_stderr(
        Command::cargo_bin("profile-run")
            .unwrap()
            .current_dir(dir.path())
            .args(["report", "long.csv", "--out", "out"]),
    );
    assert_eq!(code, 5, "{stderr}");
    assert!(
        stderr.contains("long.csv:1: a line of more than 16 MiB before any CSV header"),
        "{stderr}"
    );
}

/// A range (and kernel) name of `bytes` bytes.
fn long_name_export(bytes: usize) -> (Vec<u8>, String) {
    let records = fixture_records();
    let push_pop = records[0]
        .iter()
        .position(|h| h.contains("Push/Pop_Range"))
        .unwrap();
    let name = "N".repeat(bytes);
    let mut row = records[2].clone();
    row[push_pop] = format!("1606  \"<default domain>:{name}:none:none:none:none:none:none\" ");
    let rows = [records[0].clone(), records[1].clone(), row];
    (to_csv(&rows), name)
}

fn written_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

/// A 5 MB range name is cut at 4096 bytes when read (a 50 MB one used to make a 500 MB report.json:
/// a report lists each name about ten times), and a note says so; every output stays small.
#[test]
fn a_5_mb_range_name_is_cut_at_4096_bytes_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let (export, name) = long_name_export(5_000_000);
    std::fs::write(dir.path().join("export.csv"), export).unwrap();
    let (code, stderr, peak_mib) = run_measured(
        dir.path(),
        &[
            "report",
            "export.csv",
            "--out",
            "out",
            "report.outputs=[md,json,html,svg]",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let out = dir.path().join("out");
    let json = super::read_json(&out.join("report.json"));
    let region = &json["scopes"][0]["regions"][0];
    let cut = format!("{}… (4995904 more bytes)", &name[..4096]);
    // Compared without printing: a failure must not write megabytes.
    assert!(
        region["path"].as_str() == Some(cut.as_str()),
        "path not cut"
    );
    assert!(
        region["segments"][0].as_str() == Some(cut.as_str()),
        "segments not cut"
    );
    assert!(
        json["notes"]
            .to_string()
            .contains("1 range name(s) were longer than 4096 bytes and are cut there"),
        "no note"
    );
    let total = written_bytes(&out) + written_bytes(&out.join("charts"));
    assert!(total < 1_000_000, "{total} bytes written");
    assert!(peak_mib <= 250, "peak RSS {peak_mib} MiB");
}

#[test]
fn yaml_nested_100000_levels_is_refused_within_a_tenth_of_a_second() {
    use profile_run::config::{load, ConfigSources};
    let deep = "[".repeat(100_000);
    let sources = ConfigSources {
        overrides: vec![format!("report.metrics={deep}")],
        ..ConfigSources::default()
    };
    let started = Instant::now();
    let err = load(&sources).unwrap_err().to_string();
    let took = started.elapsed();
    assert!(took <= Duration::from_millis(100), "took {took:?}");
    assert!(
        err.contains("nests 100001 levels deep at line 1; at most 64 levels are read")
            && err.len() < 1_000,
        "{err}"
    );

    // A file: flow nesting, and block nesting by indentation, each named with its line.
    let dir = tempfile::tempdir().unwrap();
    let flow = dir.path().join("flow.yaml");
    std::fs::write(&flow, format!("report:\n  metrics: {deep}\n")).unwrap();
    let block = dir.path().join("block.yaml");
    let text: String = (0..100)
        .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
        .collect();
    std::fs::write(&block, text).unwrap();
    for (file, line) in [(&flow, 2), (&block, 65)] {
        let started = Instant::now();
        let sources = ConfigSources {
            files: vec![file.clone()],
            ..ConfigSources::default()
        };
        let err = load(&sources).unwrap_err().to_string();
        assert!(started.elapsed() <= Duration::from_millis(100));
        assert!(
            err.contains(&format!("levels deep at line {line}")) && err.contains(".yaml"),
            "{err}"
        );
    }
    // Through the command line: exit 2.
    let (code, stderr) = code_and_stderr(
        Command::cargo_bin("profile-run")
            .unwrap()
            .args(["config", "show", "--config"])
            .arg(&flow),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("flow.yaml"), "{stderr}");
}

/// A shared run directory of `count` ranks, each holding its own copy of one small capture:
/// `rank<N>/profile.ncu-rep`, or (`csv`) `rank<N>/export_raw.csv`. Each copy's host address is the
/// rank's, written in as many bytes as the original, so that no rank is a byte copy of another
/// (which `merge` refuses).
fn ranks(root: &Path, count: usize, csv: bool) -> PathBuf {
    let shared = root.join(if csv { "shared-csv" } else { "shared" });
    let (name, capture, host) = if csv {
        let raw = std::fs::read(fixture("ncu/h100-2025.3.1/kreplay_raw.csv")).unwrap();
        ("export_raw.csv", raw, "127.0.0.1")
    } else {
        let mut plain = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::GzDecoder::new(
                std::fs::File::open(fixture("ncu/h100-2025.3.1-pytorch/rep_apprange.ncu-rep.gz"))
                    .unwrap(),
            ),
            &mut plain,
        )
        .unwrap();
        ("profile.ncu-rep", plain, "192.0.2.2")
    };
    let at = capture
        .windows(host.len())
        .position(|w| w == host.as_bytes())
        .unwrap();
    for rank in 0..count {
        let dir = shared.join(format!("rank{rank}"));
        std::fs::create_dir_all(&dir).unwrap();
        let mut own = capture.clone();
        let address = format!("{:0>width$}", rank, width = host.len());
        own[at..at + host.len()].copy_from_slice(address.as_bytes());
        std::fs::write(dir.join(name), own).unwrap();
    }
    shared
}

#[test]
fn merge_of_1000_ranks_holds_no_descriptor_per_input() {
    let dir = tempfile::tempdir().unwrap();
    for csv in [false, true] {
        let shared = ranks(dir.path(), 1_000, csv);
        let out = dir.path().join(if csv { "out-csv" } else { "out" });
        let script = format!(
            "ulimit -n 900 && exec '{}' merge '{}' --out '{}' report.outputs=[json]",
            assert_cmd::cargo::cargo_bin("profile-run").display(),
            shared.display(),
            out.display()
        );
        let (code, stderr) = code_and_stderr(Command::new("sh").args(["-c", &script]));
        assert_eq!(code, 0, "csv: {csv}: {stderr}");
        let json = super::read_json(&out.join("report.json"));
        assert_eq!(json["run"]["sources"].as_array().unwrap().len(), 1_000);
        // Every rank's results are in: 1,000 copies of the capture's.
        assert!(
            json["kernel_selection"]["results_selected"]
                .as_u64()
                .unwrap()
                >= 1_000
        );
    }
}

#[test]
fn diff_of_a_region_path_over_65535_characters_prints_its_table() {
    let dir = tempfile::tempdir().unwrap();
    // 20 levels of 3,500 characters (names are cut at 4096 bytes): a path of 70,019 characters.
    let names: Vec<String> = (0..20)
        .map(|i| format!("{i:02}{}", "N".repeat(3_498)))
        .collect();
    let path = names.join("/");
    std::fs::write(dir.path().join("export.csv"), stack_export(&names)).unwrap();
    Command::cargo_bin("profile-run")
        .unwrap()
        .current_dir(dir.path())
        .args(["report", "export.csv", "--out", "out"])
        .assert()
        .success();
    let output = Command::cargo_bin("profile-run")
        .unwrap()
        .current_dir(dir.path())
        .args(["diff", "out", "out"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    // Cut like every long text a table shows; the diff's JSON keeps it whole.
    assert!(stdout.contains(&format!(
        "{}… (60019 more characters, in full in report.json)",
        &path[..10_000]
    )));
    assert!(!stdout.contains(&path[..10_001]));
    let json = Command::cargo_bin("profile-run")
        .unwrap()
        .current_dir(dir.path())
        .args(["diff", "out", "out", "--format", "json"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&json.stdout).contains(&path));
}
