//! The top level of `view --output-format json`, read in one pass: the keys profile-run uses are
//! deserialised in place (errors keep their line and key path), every other key is skipped whatever
//! its type and remembered by name, since the set of keys varies by release (21 in profiler 2.27,
//! every one a list of records).

use std::fmt;

use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::profiler::neuron::readers::json_text::{ids, opt_f64, opt_text, opt_u64};

/// The keys this reader uses; everything else is in [`Document::ignored`].
#[derive(Default)]
pub(super) struct Document {
    pub(super) summary: Option<Vec<Map<String, Value>>>,
    pub(super) instruction: Option<Vec<RawInstruction>>,
    pub(super) cc_ops: Vec<RawCollective>,
    pub(super) dma: Vec<RawDma>,
    pub(super) active_time: Vec<RawActive>,
    pub(super) metadata: Vec<Map<String, Value>>,
    pub(super) layer_summary: Option<Value>,
    pub(super) stack_frame_function_name: Value,
    pub(super) warnings: Value,
    pub(super) profile_info: Option<Value>,
    pub(super) summary_groups: Value,
    pub(super) summary_group_order: Value,
    pub(super) terminology: Value,
    /// Top-level keys skipped, in file order.
    pub(super) ignored: Vec<String>,
}

impl Document {
    /// The complete output of profiler 2.27 and later carries the tool's metric grouping; such a file
    /// must hold the lists a report is made of.
    pub(super) fn is_complete_output(&self) -> bool {
        !self.summary_groups.is_null() || !self.terminology.is_null()
    }
}

impl<'de> Deserialize<'de> for Document {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(DocumentVisitor)
    }
}

struct DocumentVisitor;

impl<'de> Visitor<'de> for DocumentVisitor {
    type Value = Document;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of profile lists (`summary`, `instruction`, `layer_summary`, …)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Document, A::Error> {
        let mut doc = Document::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "summary" => doc.summary = Some(map.next_value()?),
                "instruction" => doc.instruction = Some(map.next_value()?),
                "cc_ops" => doc.cc_ops = map.next_value()?,
                "dma" => doc.dma = map.next_value()?,
                "active_time" => doc.active_time = map.next_value()?,
                "metadata" => doc.metadata = map.next_value()?,
                "layer_summary" => doc.layer_summary = Some(map.next_value()?),
                "stack_frame_function_name" => doc.stack_frame_function_name = map.next_value()?,
                "warnings" => doc.warnings = map.next_value()?,
                "profile_info" => doc.profile_info = Some(map.next_value()?),
                "summary_groups" => doc.summary_groups = map.next_value()?,
                "summary_group_order" => doc.summary_group_order = map.next_value()?,
                "terminology" => doc.terminology = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    doc.ignored.push(key);
                }
            }
        }
        Ok(doc)
    }
}

#[derive(Deserialize)]
pub(super) struct RawInstruction {
    #[serde(deserialize_with = "opt_u64")]
    pub(super) timestamp: Option<u64>,
    #[serde(default, deserialize_with = "opt_u64")]
    pub(super) duration: Option<u64>,
    #[serde(default, deserialize_with = "opt_text")]
    pub(super) label: Option<String>,
    #[serde(default, deserialize_with = "opt_text")]
    pub(super) subgroup: Option<String>,
    #[serde(default, deserialize_with = "opt_text")]
    pub(super) opcode: Option<String>,
    #[serde(default, deserialize_with = "opt_text")]
    pub(super) hlo_name: Option<String>,
    #[serde(default, deserialize_with = "opt_text")]
    pub(super) layer: Option<String>,
    #[serde(default, deserialize_with = "opt_text")]
    pub(super) nki_source_location: Option<String>,
    #[serde(default, deserialize_with = "ids")]
    pub(super) stack_frame_ids: Vec<u64>,
    #[serde(default, deserialize_with = "opt_f64")]
    pub(super) hbm_read_bytes: Option<f64>,
    #[serde(default, deserialize_with = "opt_f64")]
    pub(super) hbm_write_bytes: Option<f64>,
    #[serde(default, deserialize_with = "opt_f64")]
    pub(super) sbuf_read_bytes: Option<f64>,
    #[serde(default, deserialize_with = "opt_f64")]
    pub(super) sbuf_write_bytes: Option<f64>,
    #[serde(default, deserialize_with = "opt_f64")]
    pub(super) spill_save_bytes: Option<f64>,
    #[serde(default, deserialize_with = "opt_f64")]
    pub(super) spill_reload_bytes: Option<f64>,
    #[serde(default, deserialize_with = "opt_f64")]
    pub(super) dma_wait_time_ns: Option<f64>,
    #[serde(default, deserialize_with = "opt_f64")]
    pub(super) raw_flops: Option<f64>,
    #[serde(default, deserialize_with = "opt_f64")]
    pub(super) adjusted_flops: Option<f64>,
    #[serde(default, deserialize_with = "opt_f64")]
    pub(super) flops_transpose: Option<f64>,
}

#[derive(Deserialize)]
pub(super) struct RawCollective {
    #[serde(deserialize_with = "opt_u64")]
    pub(super) timestamp: Option<u64>,
    #[serde(default, deserialize_with = "opt_u64")]
    pub(super) duration: Option<u64>,
    #[serde(default, deserialize_with = "opt_text")]
    pub(super) operation: Option<String>,
    #[serde(default, deserialize_with = "opt_u64")]
    pub(super) cc_trigger: Option<u64>,
    #[serde(default, deserialize_with = "opt_u64")]
    pub(super) cc_trigger_start_delay: Option<u64>,
    #[serde(default, deserialize_with = "opt_f64")]
    pub(super) input_size: Option<f64>,
    #[serde(default, deserialize_with = "opt_f64")]
    pub(super) output_size: Option<f64>,
    #[serde(default, deserialize_with = "opt_text")]
    pub(super) replica_group: Option<String>,
    #[serde(default, deserialize_with = "opt_text")]
    pub(super) algorithm: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct RawDma {
    #[serde(deserialize_with = "opt_u64")]
    pub(super) timestamp: Option<u64>,
    #[serde(default, deserialize_with = "opt_u64")]
    pub(super) duration: Option<u64>,
    #[serde(default, deserialize_with = "opt_text")]
    pub(super) subgroup: Option<String>,
    #[serde(default, deserialize_with = "opt_f64")]
    pub(super) transfer_size: Option<f64>,
}

#[derive(Deserialize)]
pub(super) struct RawActive {
    /// Documented shape: `timestamp` + `duration` + `label`/`subgroup`.
    #[serde(default, deserialize_with = "opt_u64")]
    pub(super) timestamp: Option<u64>,
    /// Shape of profiler 2.27: `start_ts` + `end_ts`/`duration_ns` + `engine`.
    #[serde(default, deserialize_with = "opt_u64")]
    pub(super) start_ts: Option<u64>,
    #[serde(default, deserialize_with = "opt_u64")]
    pub(super) end_ts: Option<u64>,
    #[serde(default, deserialize_with = "opt_u64")]
    pub(super) duration_ns: Option<u64>,
    #[serde(default, deserialize_with = "opt_text")]
    pub(super) engine: Option<String>,
    #[serde(default, deserialize_with = "opt_u64")]
    pub(super) duration: Option<u64>,
    #[serde(default, deserialize_with = "opt_text")]
    pub(super) label: Option<String>,
    #[serde(default, deserialize_with = "opt_text")]
    pub(super) subgroup: Option<String>,
}
