//! Rooms: every folder and file of src/ as a whole. Two sibling rooms (folders or files with the
//! same parent) never import each other both ways, whatever files inside them the arrows join and
//! whatever their names: a tie between two folders is a loop the file check cannot see when no
//! single file closes it.

use std::collections::{BTreeMap, BTreeSet};

use super::{display, krate, within};
use crate::architecture::imports::Crate;

/// The two sibling rooms an arrow from `from` to `to` joins: the children of their closest common
/// module that hold each. `None` when one holds the other (a module and what it declares are one
/// room seen from above).
fn rooms_joined(from: &str, to: &str) -> Option<(String, String)> {
    if within(from, to) || within(to, from) {
        return None;
    }
    let a: Vec<&str> = from.split("::").collect();
    let b: Vec<&str> = to.split("::").collect();
    let shared = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    Some((a[..=shared].join("::"), b[..=shared].join("::")))
}

/// Each pair of sibling rooms that import each other, with one arrow of each direction.
pub fn ties(krate: &Crate) -> Vec<String> {
    // (room, room) → the arrows between their files, one direction.
    let mut arrows: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for (module, targets) in krate.imports() {
        for target in targets.keys() {
            if let Some(pair) = rooms_joined(&module, target) {
                let arrow = format!("{} -> {}", display(krate, &module), display(krate, target));
                arrows.entry(pair).or_default().insert(arrow);
            }
        }
    }
    let room = |m: &str| {
        let path = m.replace("::", "/");
        if krate.files.get(m).is_some_and(|f| !f.ends_with("mod.rs")) && !is_folder(krate, m) {
            format!("src/{path}.rs")
        } else {
            format!("src/{path}/")
        }
    };
    arrows
        .iter()
        .filter(|((a, b), _)| a < b)
        .filter_map(|((a, b), there)| {
            let back = arrows.get(&(b.clone(), a.clone()))?;
            Some(format!(
                "{} <-> {}: {} / {}",
                room(a),
                room(b),
                there.iter().next()?,
                back.iter().next()?
            ))
        })
        .collect()
}

fn is_folder(krate: &Crate, module: &str) -> bool {
    let prefix = format!("{module}::");
    krate.files.keys().any(|m| m.starts_with(&prefix))
}

#[test]
fn no_two_sibling_rooms_import_each_other() {
    let ties = ties(&krate());
    assert!(
        ties.is_empty(),
        "sibling folders or files that import each other both ways (one arrow of each shown):\n{}",
        ties.join("\n")
    );
}
