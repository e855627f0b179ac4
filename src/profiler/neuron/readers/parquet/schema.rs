//! Parquet schema versions and the column names each uses. A version is recognised by
//! `profile_schema_version` in the `Metadata` table; a version not listed here is refused by name.
//!
//! 7.4.0 is the SDK's profile-schema-reference. 12.0.1 is known to exist but its reference is not
//! published: it starts from 7.4.0's names, and every needed column is checked when a table is read,
//! so a renamed column fails with the table, the column and the version rather than giving wrong
//! numbers. A rename in a new version is one changed field in its `Dialect`.

use std::path::Path;

use crate::profiler::neuron::error::{NeuronError, NeuronResult as Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaVersion {
    V7_4,
    V12_0,
}

/// Column names of the tables this reader uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dialect {
    pub start: &'static str,
    pub end: &'static str,
    pub duration: &'static str,
    pub engine: &'static str,
    pub opcode: &'static str,
    pub hlo_name: &'static str,
    pub layer: &'static str,
    pub stack_frame_ids: &'static str,
    pub nki_source_location: &'static str,
    pub dma_wait: &'static str,
    pub raw_flops: &'static str,
    pub adjusted_flops: &'static str,
    pub transpose_flops: &'static str,
    pub operation: &'static str,
    pub algorithm: &'static str,
    pub input_size: &'static str,
    pub output_size: &'static str,
    pub trigger_start: &'static str,
    pub trigger_delay: &'static str,
    pub replica_group: &'static str,
    pub queue_name: &'static str,
    pub transfer_bytes: &'static str,
    pub framework_name: &'static str,
    pub time_intervals: &'static str,
    pub node_name: &'static str,
    pub parent_name: &'static str,
    pub children_names: &'static str,
    pub stack_frame_id: &'static str,
    pub function_name: &'static str,
    pub parent_frame: &'static str,
}

const V7_4: Dialect = Dialect {
    start: "start_ts",
    end: "end_ts",
    duration: "duration_ns",
    engine: "engine",
    opcode: "opcode",
    hlo_name: "hlo_name",
    layer: "layer",
    stack_frame_ids: "stack_frame_ids",
    nki_source_location: "nki_source_location",
    dma_wait: "dma_wait_time_ns",
    raw_flops: "raw_flops",
    adjusted_flops: "adjusted_flops",
    transpose_flops: "flops_transpose",
    operation: "operation",
    algorithm: "algorithm",
    input_size: "input_size",
    output_size: "output_size",
    trigger_start: "trigger_start_ts",
    trigger_delay: "cc_trigger_start_delay",
    replica_group: "replica_group",
    queue_name: "queue_name",
    transfer_bytes: "transfer_bytes",
    framework_name: "framework_name",
    time_intervals: "time_intervals",
    node_name: "node_name",
    parent_name: "parent_name",
    children_names: "children_names",
    stack_frame_id: "stack_frame_id",
    function_name: "fully_qualified_function_name",
    parent_frame: "parent_stack_frame_id",
};

/// No published reference: 7.4.0's names, checked column by column at read time.
const V12_0: Dialect = Dialect { ..V7_4 };

impl SchemaVersion {
    /// `7.4.x` and `12.0.x` are accepted; anything else is an error naming the version.
    pub fn parse(path: &Path, version: &str) -> Result<SchemaVersion> {
        let mut parts = version.trim().split('.');
        match (parts.next(), parts.next()) {
            (Some("7"), Some("4")) => Ok(SchemaVersion::V7_4),
            (Some("12"), Some("0")) => Ok(SchemaVersion::V12_0),
            _ => Err(NeuronError::UnsupportedSchema {
                path: path.into(),
                version: version.trim().to_string(),
            }),
        }
    }

    pub fn dialect(self) -> &'static Dialect {
        match self {
            SchemaVersion::V7_4 => &V7_4,
            SchemaVersion::V12_0 => &V12_0,
        }
    }
}
