//! One readable profile (a `view` output, or a profile given as is) and the scope it describes:
//! what capture and `report`'s inputs hand the readers, and what the manifest of a run lists.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One readable profile and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Viewed {
    /// How the report names its scope.
    pub label: String,
    /// The launcher or collectives rank, when known.
    pub rank: Option<u32>,
    pub process_id: Option<u64>,
    /// `NeuronCore <N>`, when known.
    pub device: Option<String>,
    /// The `view` output (a file, or a Parquet directory); relative to the run directory in the
    /// manifest.
    pub output: PathBuf,
    /// The `view` command line that wrote it (empty for a profile given as is).
    pub command: Vec<String>,
}
