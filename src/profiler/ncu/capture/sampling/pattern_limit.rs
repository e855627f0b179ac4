//! Keeping each deep worker's `--kernel-name` pattern under the system's limit on one argument:
//! a worker whose mangled names would pass it becomes several with the same count and GPU
//! (`workers::plan`).
//!
//! Floor: profiler (see `crate::profiler`).

/// The longest names' pattern a worker is given, in bytes. Linux refuses a single argument over
/// 128 KiB (`MAX_ARG_STRLEN`), and a user's own `kernel_name` pattern may be added to it.
pub const PATTERN_BYTES: usize = 96 * 1024;

/// `names` in order, cut into runs whose pattern (each name regex-escaped, with its `|`) stays
/// within `limit` bytes; a name longer than `limit` alone is a run of its own. One more ncu process
/// started with the others costs a start-up that overlaps theirs; one argument too long would fail
/// the worker before it profiled anything.
pub fn chunks(names: &[String], limit: usize) -> Vec<Vec<String>> {
    let mut chunks: Vec<Vec<String>> = vec![Vec::new()];
    let mut bytes = 0;
    for name in names {
        let len = regex::escape(name).len() + 1;
        if bytes + len > limit && chunks.last().is_some_and(|c| !c.is_empty()) {
            chunks.push(Vec::new());
            bytes = 0;
        }
        bytes += len;
        if let Some(chunk) = chunks.last_mut() {
            chunk.push(name.clone());
        }
    }
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(names: &[String]) -> usize {
        names.iter().map(|n| regex::escape(n).len() + 1).sum()
    }

    #[test]
    fn names_past_the_limit_are_cut_into_runs_under_it() {
        // 1,000 mangled names of ~200 bytes (GPT-sized models launch a few hundred): ~200 KB in
        // one pattern, over Linux's 128 KiB for one argument.
        let names: Vec<String> = (0..1000)
            .map(|i| format!("_ZN2at6native{i:04}{}", "x".repeat(180)))
            .collect();
        let runs = chunks(&names, PATTERN_BYTES);
        assert_eq!(runs.len(), 3, "~200 KB in runs of at most 96 KiB");
        assert!(runs.iter().all(|r| pattern(r) <= PATTERN_BYTES));
        assert_eq!(runs.concat(), names, "every name once, in order");
        assert_eq!(
            chunks(&names[..10], PATTERN_BYTES),
            vec![names[..10].to_vec()]
        );
        // A limit below one name: each name alone; `$` and `.` escaped count.
        let odd = vec!["a.b".to_string(), "c$d".to_string()];
        assert_eq!(
            chunks(&odd, 4),
            vec![vec!["a.b".to_string()], vec!["c$d".to_string()]]
        );
        assert_eq!(chunks(&odd, 10), vec![odd.clone()]);
    }
}
