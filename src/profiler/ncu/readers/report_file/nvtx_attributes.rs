//! NVTX event attributes (category, color, payload, message) of a push/pop or start/end range.

use super::nvtx_names::Names;
use super::wire::{Cursor, WireError};

/// Event attributes given with a push or start (`nvtxEventAttributes_t`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct NvtxAttributes {
    pub category: u32,
    /// ARGB when the color type is ARGB.
    pub color: Option<u32>,
    pub payload: Option<NvtxPayload>,
    pub message: Option<NvtxMessage>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NvtxPayload {
    U64(u64),
    I64(i64),
    F64(f64),
    U32(u32),
    I32(i32),
    F32(f32),
    Json(String),
    /// A registered JSON schema's handle.
    JsonRegistered(u64),
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct NvtxMessage {
    /// `ascii`, `unicode` or `registered`, as ncu's CSV `Msg_Type` shows (lower case).
    pub kind: &'static str,
    /// The text; for a registered message, the registered string it names (if the domain has it).
    pub text: Option<String>,
    pub handle: Option<u64>,
}

pub(crate) fn decode(
    msg: Cursor<'_>,
    domain: u64,
    names: &Names<'_>,
) -> Result<NvtxAttributes, WireError> {
    let mut a = NvtxAttributes::default();
    msg.for_each(|f| {
        match f.number {
            2 => a.category = f.as_u32()?,
            3 => a.color = decode_color(f.as_message()?)?,
            4 => a.payload = decode_payload(f.as_message()?)?,
            5 => a.message = decode_message(f.as_message()?, domain, names)?,
            _ => {}
        }
        Ok(())
    })?;
    Ok(a)
}

fn decode_color(msg: Cursor<'_>) -> Result<Option<u32>, WireError> {
    let (mut argb, mut color) = (false, None);
    msg.for_each(|f| {
        match f.number {
            1 => argb = f.as_u64()? == 1,
            2 => color = Some(f.as_u32()?),
            _ => {}
        }
        Ok(())
    })?;
    Ok(color.filter(|_| argb))
}

fn decode_payload(msg: Cursor<'_>) -> Result<Option<NvtxPayload>, WireError> {
    let mut kind = 0;
    let mut values: [Option<super::wire::Field<'_>>; 9] = [None; 9];
    msg.for_each(|f| {
        match f.number {
            1 => kind = f.as_u64()?,
            n @ 2..=8 => values[n as usize] = Some(f),
            _ => {}
        }
        Ok(())
    })?;
    // The payload type says which value field is meant; any other field present is ignored.
    let field = |n: usize| values[n];
    let p = match (kind, field(kind_field(kind))) {
        (1, Some(f)) => NvtxPayload::U64(f.as_u64()?),
        (2, Some(f)) => NvtxPayload::I64(f.as_u64()? as i64),
        (3, Some(f)) => NvtxPayload::F64(f.as_f64()?),
        (4, Some(f)) => NvtxPayload::U32(f.as_u32()?),
        (5, Some(f)) => NvtxPayload::I32(f.as_i32()?),
        (6, Some(f)) => NvtxPayload::F32(f.as_f32()?),
        (7, Some(f)) => NvtxPayload::Json(f.as_str()?.to_owned()),
        (8, Some(f)) => NvtxPayload::JsonRegistered(f.as_u64()?),
        _ => return Ok(None),
    };
    Ok(Some(p))
}

/// The value field a payload type is stored in.
fn kind_field(kind: u64) -> usize {
    match kind {
        1 | 8 => 2,
        2 => 3,
        3 => 4,
        4 => 5,
        5 => 6,
        6 => 7,
        7 => 8,
        _ => 0,
    }
}

fn decode_message(
    msg: Cursor<'_>,
    domain: u64,
    names: &Names<'_>,
) -> Result<Option<NvtxMessage>, WireError> {
    let (mut kind, mut text, mut handle) = (0, None, None);
    msg.for_each(|f| {
        match f.number {
            1 => kind = f.as_u64()?,
            2 => text = Some(f.as_str()?.to_owned()),
            3 => handle = Some(f.as_u64()?),
            _ => {}
        }
        Ok(())
    })?;
    let kind = match kind {
        1 => "ascii",
        2 => "unicode",
        3 => "registered",
        _ => return Ok(None),
    };
    if kind == "registered" && text.is_none() {
        text = handle.and_then(|h| names.registered(domain, h));
    }
    Ok(Some(NvtxMessage { kind, text, handle }))
}
