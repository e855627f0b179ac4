//! A system profile read within bounds (issue 42, item 5): event names cut as range names are, an
//! event lasting past 2^53 ns refused as the trace reader refuses one, a Parquet footer that claims
//! more metadata than a table holds refused before it is read (on the committed pyarrow fixture
//! too), a FIFO table of a device profile refused rather than opened. The sizes that need minutes
//! are in `benches/neuron_system.sh`.

use std::path::Path;
use std::time::Duration;

use profile_run::profiler::neuron::readers::parquet;
use profile_run::profiler::neuron::readers::parquet::system;

use super::cli::report_json;
use super::parquet_gen::{write_table, Col};
use super::system_gen::{forge_footer, long_name, INSTANCE_A};
use super::system_once::within;
use super::system_report::run;
use crate::common::fixture;

#[test]
fn a_megabyte_event_name_is_cut_as_a_range_name_is_and_the_report_stays_small() {
    let tmp = tempfile::tempdir().unwrap();
    long_name(tmp.path(), 1 << 20);
    let out = run("report", tmp.path(), &[tmp.path().to_path_buf()]).unwrap();
    let json = std::fs::metadata(out.join("report.json")).unwrap().len();
    assert!(json < 256 << 10, "report.json holds {json} bytes");
    let report = report_json(&out);
    let name = report["scopes"][0]["regions"][1]["name"].as_str().unwrap();
    assert!(name.len() < 4200, "{} bytes", name.len());
    assert!(
        name.ends_with("… (1044480 more bytes)"),
        "{}",
        &name[4000..]
    );
    let notes = report["notes"].to_string();
    assert!(notes.contains("longer than 4096 bytes"), "{notes}");
}

/// A one-row events table of `start` and, as `column`, `value`.
fn one_event(dir: &Path, column: &'static str, value: i64) {
    std::fs::create_dir_all(dir).unwrap();
    write_table(
        &dir.join("SystemProfileEvents.parquet"),
        "SystemProfileEvents",
        &[
            Col::Str("name", vec![Some("nrt_execute".into())]),
            Col::I64("start_ts", vec![Some(1)]),
            Col::I64(column, vec![Some(value)]),
            Col::Str("instance_id", vec![Some(INSTANCE_A.into())]),
            Col::I64("process_id", vec![Some(7)]),
        ],
    );
}

#[test]
fn an_event_lasting_past_2_to_the_53_ns_is_refused_as_a_trace_span_is() {
    let tmp = tempfile::tempdir().unwrap();
    let long = tmp.path().join("long");
    one_event(&long, "duration_ns", i64::MAX);
    let err = system::read(&long).unwrap_err().to_string();
    assert!(
        err.contains("table SystemProfileEvents, row 0, column `duration_ns`")
            && err.contains("would last 9223372036854775807 ns, more than 2^53 ns"),
        "{err}"
    );
    let ends = tmp.path().join("ends");
    one_event(&ends, "end_ts", (1 << 53) + 2);
    let err = system::read(&ends).unwrap_err().to_string();
    assert!(
        err.contains("column `end_ts`") && err.contains("2^53"),
        "{err}"
    );
    // at the bound: read
    let at = tmp.path().join("at");
    one_event(&at, "duration_ns", 1 << 53);
    assert_eq!(system::read(&at).unwrap().events[0].end_ns, (1 << 53) + 1);
}

#[test]
fn a_footer_claiming_more_metadata_than_a_table_holds_is_refused_before_it_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    // the committed pyarrow profile, its Summary table's footer forged (the file sparse)
    let dir = tmp.path().join("forged@latest");
    std::fs::create_dir_all(&dir).unwrap();
    let real = fixture("neuron/pyarrow_profile@latest");
    for entry in std::fs::read_dir(&real).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
    }
    let summary = dir.join("Summary.parquet");
    forge_footer(
        &real.join("Summary.parquet"),
        &summary,
        100 << 20,
        200 << 20,
    );
    let err = parquet::read(&dir).unwrap_err().to_string();
    let at = format!("{}: byte {}", summary.display(), (200 << 20) - 8);
    assert!(err.starts_with(&at), "{err}");
    assert!(
        err.contains("the footer says the metadata holds 104857600 bytes, more than the 67108864"),
        "{err}"
    );
    // a claim past the file's own size
    forge_footer(&real.join("Summary.parquet"), &summary, 5_000, 4_000);
    let err = parquet::read(&dir).unwrap_err().to_string();
    assert!(
        err.contains("holds 5000 bytes, but the file holds only 3988 bytes before its footer"),
        "{err}"
    );
}

#[test]
fn a_fifo_table_of_a_device_profile_is_refused_not_opened() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("fifo@latest");
    std::fs::create_dir_all(&dir).unwrap();
    let real = fixture("neuron/pyarrow_profile@latest");
    for entry in std::fs::read_dir(&real).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
    }
    let fifo = dir.join("Summary.parquet");
    std::fs::remove_file(&fifo).unwrap();
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let read = within(Duration::from_secs(30), {
        let dir = dir.clone();
        move || parquet::read(&dir).map(drop).map_err(|e| e.to_string())
    });
    let Some(read) = read else {
        use std::os::unix::fs::OpenOptionsExt;
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
            .open(&fifo);
        panic!("the reader blocked opening {}", fifo.display());
    };
    let err = read.unwrap_err();
    assert!(
        err.starts_with(&format!("{}: is a FIFO", fifo.display())),
        "{err}"
    );
}
