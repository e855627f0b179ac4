//! Parquet profile directories (`neuron-explorer view --output-format parquet`): one table per file
//! (`Instruction.parquet`, `CcOp.parquet`, parts `Name_0.parquet`, `Name_1.parquet`), a table present
//! only when the profile has that activity. The schema version comes from `Metadata`
//! (`profile_schema_version`) and picks the column names ([`schema`]).
//!
//! Floor: profiler (see `crate::profiler`): imports run, process, analysis, insights, report,
//! config, region and the ground floor, and its own profiler's rooms.

mod pages;
pub mod schema;
pub mod system;
pub mod table;
mod tables;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::profiler::neuron::error::{NeuronError, NeuronResult as Result};
use crate::profiler::neuron::readers::model::NeuronProfile;
use schema::{Dialect, SchemaVersion};
use table::Table;

/// The tables of a directory, by name (`BirInstruction_1.parquet` → `BirInstruction`).
pub fn list_tables(dir: &Path) -> Result<BTreeMap<String, Table>> {
    let entries = std::fs::read_dir(dir).map_err(|e| NeuronError::io(dir, e))?;
    let mut parts: BTreeMap<String, Vec<(u64, PathBuf)>> = BTreeMap::new();
    for entry in entries {
        let path = entry.map_err(|e| NeuronError::io(dir, e))?.path();
        if path.extension().and_then(|e| e.to_str()) != Some("parquet") {
            continue;
        }
        let stem = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let (name, part) = split_part(&stem);
        parts.entry(name).or_default().push((part, path));
    }
    Ok(parts
        .into_iter()
        .map(|(name, mut files)| {
            files.sort();
            let files = files.into_iter().map(|(_, p)| p).collect();
            (name.clone(), Table { name, files })
        })
        .collect())
}

/// `Name_3` → (`Name`, 3); `Name` → (`Name`, 0).
fn split_part(stem: &str) -> (String, u64) {
    if let Some((name, n)) = stem.rsplit_once('_') {
        if let Ok(n) = n.parse() {
            return (name.to_string(), n);
        }
    }
    (stem.to_string(), 0)
}

/// What table readers share: the version and its column names.
pub(crate) struct Ctx<'a> {
    pub version: &'a str,
    pub d: &'static Dialect,
}

impl Ctx<'_> {
    /// Every column in `needed` must exist; `either` pairs need one of two.
    pub fn require(&self, t: &Table, cols: &[String], needed: &[&str]) -> Result<()> {
        for c in needed {
            let alternatives: Vec<&str> = c.split('|').collect();
            if !alternatives.iter().any(|a| cols.iter().any(|x| x == a)) {
                return Err(NeuronError::MissingColumn {
                    path: t.files[0].clone(),
                    table: t.name.clone(),
                    column: alternatives.join("` or `"),
                    version: self.version.to_string(),
                });
            }
        }
        Ok(())
    }
}

/// Read a Parquet profile directory.
pub fn read(dir: &Path) -> Result<NeuronProfile> {
    let tables = list_tables(dir)?;
    let meta = tables
        .get("Metadata")
        .ok_or_else(|| NeuronError::Unrecognised {
            path: dir.into(),
            message: "no Metadata.parquet: the schema version cannot be told. Is this a \
                  `view --output-format parquet` directory?"
                .into(),
        })?;
    let metadata = tables::key_values(meta)?;
    let version = metadata.get("profile_schema_version").ok_or_else(|| {
        NeuronError::parse(
            &meta.files[0],
            "table Metadata",
            "no `profile_schema_version`: the schema version cannot be told",
        )
    })?;
    let ctx = Ctx {
        version,
        d: SchemaVersion::parse(&meta.files[0], version)?.dialect(),
    };
    let mut p = NeuronProfile {
        source: dir.into(),
        schema_version: Some(version.clone()),
        ..NeuronProfile::default()
    };
    let instruction = tables
        .get("Instruction")
        .or_else(|| tables.get("BirInstruction"));
    if let Some(t) = instruction {
        p.instructions = tables::instructions(&ctx, t)?;
    }
    if let Some(t) = tables.get("CcOp") {
        p.collectives = tables::collectives(&ctx, t)?;
    }
    if let Some(t) = tables.get("DmaPacket") {
        p.dma = tables::dma(&ctx, t)?;
    }
    if let Some(t) = tables.get("FrameworkInstruction") {
        p.layer_spans = tables::layer_spans(&ctx, t)?;
    }
    if let Some(t) = tables.get("FrameworkNode") {
        p.layers = tables::layers(&ctx, t)?;
    }
    if let Some(t) = tables.get("KernelStackFrames") {
        p.stack_frames = tables::frames(&ctx, t)?;
    }
    if let Some(t) = tables.get("Summary") {
        p.summaries = tables::summaries(t)?;
    }
    p.metadata = metadata;
    p.rebase();
    Ok(p)
}
