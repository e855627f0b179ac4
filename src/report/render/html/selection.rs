//! report.html's kernel-selection line: the patterns and how many results they kept and left out.

use crate::report::format;
use crate::report::model::KernelSelectionInfo;

pub(super) fn text(ks: &KernelSelectionInfo, many: &str) -> String {
    let patterns = |list: &[String]| list.join(", ");
    let what = match (ks.include.is_empty(), ks.exclude.is_empty()) {
        (true, true) => format!("all {many}"),
        (false, true) => format!("include {}", patterns(&ks.include)),
        (true, false) => format!("all {many}, exclude {}", patterns(&ks.exclude)),
        (false, false) => format!(
            "include {}, exclude {}",
            patterns(&ks.include),
            patterns(&ks.exclude)
        ),
    };
    format!(
        "{what}; {} results selected, {} left out",
        format::count(ks.results_selected as f64),
        format::count(ks.results_excluded as f64)
    )
}
