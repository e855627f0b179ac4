//! A top-up pass's report file beside a deep pass's, readable or cut short, is left out: the report
//! is the one the deep pass gives alone, with a note naming the file.

use crate::common::fixture;
use crate::sampled::render;

const SAMPLED: &str = "ncu/h100-2025.3.1-sampled";

#[test]
fn a_topup_file_readable_or_not_is_left_out_with_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["train.ncu-rep.gz", "train.deep.ncu-rep.gz"] {
        std::fs::copy(fixture(&format!("{SAMPLED}/{name}")), tmp.path().join(name)).unwrap();
    }
    let alone = render(
        &tmp.path().join("train.ncu-rep.gz"),
        &tmp.path().join("alone"),
        &[],
    );
    let deep = std::fs::read(tmp.path().join("train.deep.ncu-rep.gz")).unwrap();
    // A whole top-up capture (the deep one again), then one cut short: its first 4 KiB.
    for (what, bytes) in [("whole", &deep[..]), ("cut", &deep[..4096])] {
        std::fs::write(tmp.path().join("train.topup.ncu-rep.gz"), bytes).unwrap();
        let with = render(
            &tmp.path().join("train.ncu-rep.gz"),
            &tmp.path().join(what),
            &[],
        );
        assert_eq!(with["scopes"], alone["scopes"], "{what}");
        assert_eq!(with["sampling"], alone["sampling"], "{what}");
        let notes = with["notes"].to_string();
        assert!(
            notes.contains("train.topup.ncu-rep.gz is a top-up pass's report file, which profile-run does not read"),
            "{what}: {notes}"
        );
    }
}
