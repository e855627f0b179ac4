//! Table-by-table conversion of Parquet rows into the profile model.

use std::collections::BTreeMap;

use super::table::{RowView, Table};
use super::Ctx;
use crate::profiler::neuron::error::NeuronResult as Result;
use crate::profiler::neuron::readers::model::{
    Collective, DmaTransfer, Engine, Instruction, LayerNode, LayerSpan, StackFrame, Summary,
};
use crate::profiler::neuron::readers::summary_json::Entry;

/// The end of a row: `end_ts`, else start + `duration_ns`, else the start.
fn end(ctx: &Ctx, r: &RowView, start: u64) -> Result<u64> {
    Ok(match r.u64(ctx.d.end)? {
        Some(e) => e,
        None => start.saturating_add(r.u64(ctx.d.duration)?.unwrap_or(0)),
    })
}

fn span_columns(ctx: &Ctx) -> [String; 2] {
    [
        ctx.d.start.to_string(),
        format!("{}|{}", ctx.d.end, ctx.d.duration),
    ]
}

fn require(ctx: &Ctx, t: &Table, extra: &[&str]) -> Result<()> {
    let cols = t.columns()?;
    let [s, e] = span_columns(ctx);
    let mut needed = vec![s.as_str(), e.as_str()];
    needed.extend_from_slice(extra);
    ctx.require(t, &cols, &needed)
}

pub(super) fn instructions(ctx: &Ctx, t: &Table) -> Result<Vec<Instruction>> {
    let d = ctx.d;
    require(ctx, t, &[d.opcode])?;
    let mut out = Vec::new();
    t.for_each(|r| {
        let start = r.req_u64(d.start)?;
        out.push(Instruction {
            start_ns: start,
            end_ns: end(ctx, r, start)?,
            engine: r.text(d.engine)?.as_deref().map(Engine::parse),
            opcode: r.text(d.opcode)?.unwrap_or_default(),
            hlo_name: r.text(d.hlo_name)?,
            layer: r.text(d.layer)?,
            stack_frame_ids: r.ids(d.stack_frame_ids)?,
            nki_source_location: r.text(d.nki_source_location)?,
            hbm_read_bytes: r.f64("hbm_read_bytes")?,
            hbm_write_bytes: r.f64("hbm_write_bytes")?,
            sbuf_read_bytes: r.f64("sbuf_read_bytes")?,
            sbuf_write_bytes: r.f64("sbuf_write_bytes")?,
            spill_save_bytes: r.f64("spill_save_bytes")?,
            spill_reload_bytes: r.f64("spill_reload_bytes")?,
            dma_wait_ns: r.f64(d.dma_wait)?,
            raw_flops: r.f64(d.raw_flops)?,
            adjusted_flops: r.f64(d.adjusted_flops)?,
            transpose_flops: r.f64(d.transpose_flops)?,
        });
        Ok(())
    })?;
    Ok(out)
}

pub(super) fn collectives(ctx: &Ctx, t: &Table) -> Result<Vec<Collective>> {
    let d = ctx.d;
    require(ctx, t, &[d.operation])?;
    let mut out = Vec::new();
    t.for_each(|r| {
        let start = r.req_u64(d.start)?;
        let trigger = match r.u64(d.trigger_start)? {
            Some(t) => Some(t),
            None => r
                .u64(d.trigger_delay)?
                .map(|delay| start.saturating_sub(delay)),
        };
        out.push(Collective {
            start_ns: start,
            end_ns: end(ctx, r, start)?,
            operation: r.text(d.operation)?.unwrap_or_default(),
            algorithm: r.text(d.algorithm)?,
            trigger_ns: trigger,
            input_size: r.f64(d.input_size)?,
            output_size: r.f64(d.output_size)?,
            replica_group: r.text(d.replica_group)?,
        });
        Ok(())
    })?;
    Ok(out)
}

pub(super) fn dma(ctx: &Ctx, t: &Table) -> Result<Vec<DmaTransfer>> {
    let d = ctx.d;
    // A packet without an end is a point in time; its size still counts.
    ctx.require(t, &t.columns()?, &[d.start, d.transfer_bytes])?;
    let mut out = Vec::new();
    t.for_each(|r| {
        let start = r.req_u64(d.start)?;
        out.push(DmaTransfer {
            start_ns: start,
            end_ns: end(ctx, r, start)?,
            queue: r.text(d.queue_name)?.unwrap_or_default(),
            bytes: r.f64(d.transfer_bytes)?.unwrap_or(0.0),
        });
        Ok(())
    })?;
    Ok(out)
}

pub(super) fn layer_spans(ctx: &Ctx, t: &Table) -> Result<Vec<LayerSpan>> {
    let d = ctx.d;
    require(ctx, t, &[d.framework_name])?;
    let mut out = Vec::new();
    t.for_each(|r| {
        let start = r.req_u64(d.start)?;
        out.push(LayerSpan {
            path: r.text(d.framework_name)?.unwrap_or_default(),
            start_ns: start,
            end_ns: end(ctx, r, start)?,
            intervals: r.intervals(d.time_intervals)?,
        });
        Ok(())
    })?;
    Ok(out)
}

pub(super) fn layers(ctx: &Ctx, t: &Table) -> Result<Vec<LayerNode>> {
    let d = ctx.d;
    ctx.require(t, &t.columns()?, &[d.node_name])?;
    let mut out = Vec::new();
    t.for_each(|r| {
        out.push(LayerNode {
            name: r.text(d.node_name)?.unwrap_or_default(),
            parent: r.text(d.parent_name)?,
            children: r.names(d.children_names)?,
            hfu: r.f64("hfu")?,
            mfu: r.f64("mfu")?,
            ..LayerNode::default()
        });
        Ok(())
    })?;
    Ok(out)
}

pub(super) fn frames(ctx: &Ctx, t: &Table) -> Result<Vec<StackFrame>> {
    let d = ctx.d;
    ctx.require(t, &t.columns()?, &[d.stack_frame_id, d.function_name])?;
    let mut out = Vec::new();
    t.for_each(|r| {
        out.push(StackFrame {
            id: r.req_u64(d.stack_frame_id)?,
            function: r.text(d.function_name)?.unwrap_or_default(),
            parent: r.u64(d.parent_frame)?,
        });
        Ok(())
    })?;
    Ok(out)
}

const KEY_COLUMNS: &[&str] = &["key", "name", "metric", "field"];

/// A key/value table (`key`|`name`|`metric`|`field` and `value` columns) or a wide one (one column per
/// key, one row per entry): returns the column holding keys, if long.
fn long_form(cols: &[String]) -> Option<&str> {
    let has_value = cols.iter().any(|c| c == "value");
    let key = KEY_COLUMNS.iter().find(|k| cols.iter().any(|c| c == *k))?;
    (has_value && cols.len() <= 3).then_some(key)
}

/// `Metadata` as text by key, from either layout (first row of a wide table).
pub(super) fn key_values(t: &Table) -> Result<BTreeMap<String, String>> {
    let cols = t.columns()?;
    let mut out = BTreeMap::new();
    let key = long_form(&cols);
    let mut first = true;
    t.for_each(|r| {
        match key {
            Some(k) => {
                if let (Some(name), v) = (r.text(k)?, r.text("value")?) {
                    out.insert(name, v.unwrap_or_default());
                }
            }
            None if first => {
                for c in r.columns {
                    if let Some(v) = r.text(c)? {
                        out.insert(c.clone(), v);
                    }
                }
            }
            None => {}
        }
        first = false;
        Ok(())
    })?;
    Ok(out)
}

/// `Summary`: one entry per row of a wide table (`profile_id` names it), or one entry from a long one.
/// Every value is checked as summary-json's are ([`RowView::summary_value`]).
pub(super) fn summaries(t: &Table) -> Result<Vec<Summary>> {
    let cols = t.columns()?;
    let mut out: Vec<Summary> = Vec::new();
    if let Some(k) = long_form(&cols) {
        let mut s = Summary {
            profile_id: "summary".into(),
            ..Summary::default()
        };
        t.for_each(|r| {
            let Some(name) = r.text(k)? else {
                return Ok(());
            };
            let value = r.summary_value("value", &name)?;
            put(&mut s, name, value.unwrap_or(Entry::Number(None)));
            Ok(())
        })?;
        out.push(s);
        return Ok(out);
    }
    t.for_each(|r| {
        let mut s = Summary {
            profile_id: r
                .text("profile_id")?
                .unwrap_or_else(|| format!("row {}", r.row_no)),
            ..Summary::default()
        };
        for c in r.columns.iter().filter(|c| *c != "profile_id") {
            if let Some(value) = r.summary_value(c, c)? {
                put(&mut s, c.clone(), value);
            }
        }
        out.push(s);
        Ok(())
    })?;
    Ok(out)
}

fn put(s: &mut Summary, name: String, value: Entry) {
    match value {
        Entry::Number(v) => {
            s.metrics.insert(name.into(), v);
        }
        Entry::Text(t) => {
            s.text.insert(name, t);
        }
    }
}
