//! An older adaptive sampled run's top-up report file that cannot be read is left out: the report is
//! the one a sampled run without adaptive samples would have, with a note.

use crate::common::fixture;
use crate::sampled::render;

const SAMPLED: &str = "ncu/h100-2025.3.1-sampled";

#[test]
fn an_unreadable_topup_file_is_left_out_with_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["train.ncu-rep.gz", "train.deep.ncu-rep.gz"] {
        std::fs::copy(fixture(&format!("{SAMPLED}/{name}")), tmp.path().join(name)).unwrap();
    }
    let alone = render(
        &tmp.path().join("train.ncu-rep.gz"),
        &tmp.path().join("alone"),
        &[],
    );
    // A top-up capture cut short: the deep capture's first 4 KiB.
    let deep = std::fs::read(tmp.path().join("train.deep.ncu-rep.gz")).unwrap();
    std::fs::write(tmp.path().join("train.topup.ncu-rep.gz"), &deep[..4096]).unwrap();
    let with_bad = render(
        &tmp.path().join("train.ncu-rep.gz"),
        &tmp.path().join("bad"),
        &[],
    );
    assert_eq!(with_bad["scopes"], alone["scopes"]);
    assert_eq!(with_bad["sampling"]["topup_results"], 0);
    let notes = with_bad["notes"].to_string();
    assert!(
        notes.contains("train.topup.ncu-rep.gz could not be read"),
        "{notes}"
    );
}
