//! `report.compare`: up to three regions side by side. An entry names a region by path
//! (`train_step/forward`) or, when only one region of a scope has it, by name (`forward`); each scope
//! that has at least one of them gets a comparison, and an entry that names nothing anywhere becomes
//! a report note.

use super::model::{ComparedRegion, Comparison, Region, Scope};

/// The most regions `report.compare` may name.
pub const MAX_COMPARED: usize = 3;

/// The comparisons of `wanted` in every scope (the aggregate last), and notes on entries that name
/// no region or several.
pub fn comparisons(
    wanted: &[String],
    scopes: &[Scope],
    aggregate: Option<&Scope>,
) -> (Vec<Comparison>, Vec<String>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    if wanted.is_empty() {
        return (out, notes);
    }
    let mut found_anywhere = vec![false; wanted.len()];
    for scope in scopes.iter().chain(aggregate) {
        let mut comparison = Comparison {
            scope: scope.label.clone(),
            regions: Vec::new(),
            missing: Vec::new(),
        };
        for (n, entry) in wanted.iter().enumerate() {
            match find(entry, &scope.regions) {
                Found::One(region) => {
                    found_anywhere[n] = true;
                    comparison.regions.push(compared(entry, region));
                }
                Found::None => comparison.missing.push(entry.clone()),
                Found::Several(paths) => {
                    notes.push(format!(
                        "report.compare: `{entry}` names several regions in `{}` ({}); name one by its path.",
                        scope.label,
                        paths.join(", ")
                    ));
                    found_anywhere[n] = true;
                    comparison.missing.push(entry.clone());
                }
            }
        }
        if !comparison.regions.is_empty() {
            out.push(comparison);
        }
    }
    for (entry, found) in wanted.iter().zip(found_anywhere) {
        if !found {
            notes.push(format!(
                "report.compare: `{entry}` names no region in any scope; name a region by its path as the region tables show it (`outer/inner`) or by its name."
            ));
        }
    }
    (out, notes)
}

enum Found<'a> {
    One(&'a Region),
    None,
    Several(Vec<String>),
}

fn find<'a>(entry: &str, regions: &'a [Region]) -> Found<'a> {
    if let Some(region) = regions.iter().find(|r| r.path == entry) {
        return Found::One(region);
    }
    let named: Vec<&Region> = regions.iter().filter(|r| r.name == entry).collect();
    match named.as_slice() {
        [] => Found::None,
        [one] => Found::One(one),
        several => Found::Several(several.iter().map(|r| format!("`{}`", r.path)).collect()),
    }
}

fn compared(entry: &str, region: &Region) -> ComparedRegion {
    ComparedRegion {
        requested: entry.to_string(),
        path: region.path.clone(),
        kernel_count: region.kernel_count,
        time_share: region.time_share,
        instances: region.instances,
        inclusive: region.inclusive.clone(),
    }
}
