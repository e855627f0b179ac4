//! The NVTX cells of a raw page, parsed once per distinct cell: a profile has few distinct stacks and
//! many results.

use crate::fast_map::FastMap;
use crate::region::Renames;

use super::super::nvtx_cell::{parse_cell, rename_entries, stacks_by_domain, CellLayout};

/// One NVTX cell, parsed: one path per domain (the default domain's first, empty when it has no
/// open range), and every entry's segment in cell order (what a start/end cell lists).
#[derive(Default)]
pub(super) struct CellStacks {
    pub stacks: Vec<Vec<String>>,
    pub all: Vec<String>,
}

/// Caches parsed NVTX cells: a profile has few distinct stacks and many results, so each distinct
/// cell is parsed once and later rows cost one hash lookup.
#[derive(Default)]
pub(super) struct StackCache {
    index: FastMap<Box<[u8]>, usize>,
    stacks: Vec<CellStacks>,
}

impl StackCache {
    pub fn get(&mut self, raw: &[u8], layout: CellLayout, renames: &Renames) -> &CellStacks {
        static EMPTY: CellStacks = CellStacks {
            stacks: Vec::new(),
            all: Vec::new(),
        };
        if raw.is_empty() {
            return &EMPTY;
        }
        let at = match self.index.get(raw) {
            Some(&at) => at,
            None => {
                let cell = String::from_utf8_lossy(raw);
                let mut entries = parse_cell(&cell, layout);
                rename_entries(&mut entries, renames);
                let by_domain = stacks_by_domain(&entries);
                let mut stacks = vec![by_domain.default];
                stacks.extend(by_domain.others);
                self.stacks.push(CellStacks {
                    stacks,
                    all: entries.iter().map(|e| e.segment()).collect(),
                });
                self.index.insert(raw.into(), self.stacks.len() - 1);
                self.stacks.len() - 1
            }
        };
        &self.stacks[at]
    }
}
