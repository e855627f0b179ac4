//! Captures given twice as byte copies (`cp -r rank1 rank2`): the same results under two names,
//! which file identity (device and inode) cannot tell apart. Only files of one size are compared,
//! first by a hash of their first 64 KiB, then whole, so ranks that differ (their process ids are in
//! the first rows) cost one short read each, and most cost nothing.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// How much of a file the first comparison hashes.
const HEAD_BYTES: u64 = 64 * 1024;

/// Every capture file taken so far, by size.
#[derive(Default)]
pub struct Copies {
    by_size: BTreeMap<u64, Vec<PathBuf>>,
}

impl Copies {
    pub fn add(&mut self, file: &Path, len: u64) {
        // An empty file holds no result to count twice.
        if len > 0 {
            self.by_size
                .entry(len)
                .or_default()
                .push(file.to_path_buf());
        }
    }

    /// An error naming the first file that is a byte copy of an earlier one.
    pub fn check(&self) -> Result<()> {
        for files in self.by_size.values().filter(|f| f.len() > 1) {
            let heads = first_alike(files, Some(HEAD_BYTES))?;
            for alike in heads.values().filter(|f| f.len() > 1) {
                let whole = first_alike(alike.iter().copied(), None)?;
                if let Some(copy) = whole.values().find(|f| f.len() > 1) {
                    return Err(Error::Usage(format!(
                        "{} is a byte copy of {}: the same capture twice, whose results would be counted twice; give each rank's run once (remove the copy, or merge the runs apart)",
                        copy[1].display(),
                        copy[0].display()
                    )));
                }
            }
        }
        Ok(())
    }
}

/// The files grouped by the hash of their first `bytes` (all of them: `None`), in input order.
fn first_alike<'f>(
    files: impl IntoIterator<Item = &'f PathBuf>,
    bytes: Option<u64>,
) -> Result<BTreeMap<[u8; 32], Vec<&'f PathBuf>>> {
    let mut groups: BTreeMap<[u8; 32], Vec<&'f PathBuf>> = BTreeMap::new();
    for file in files {
        groups.entry(digest(file, bytes)?).or_default().push(file);
    }
    Ok(groups)
}

fn digest(file: &Path, bytes: Option<u64>) -> Result<[u8; 32]> {
    let unreadable =
        |e: std::io::Error| Error::Usage(format!("cannot read {}: {e}", file.display()));
    let input = std::fs::File::open(file).map_err(unreadable)?;
    let mut input: Box<dyn Read> = match bytes {
        Some(n) => Box::new(input.take(n)),
        None => Box::new(input),
    };
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = input.read(&mut buf).map_err(unreadable)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finalize().into())
}
