//! CPU and Python call stacks (`--call-stack`, `--call-stack-type native|python`): one frame per call
//! with its module, function, file and line, as ncu stores them.

use super::wire::{Cursor, WireError};

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CallFrame {
    /// The function (`step`, `<module>`); empty when ncu could not resolve it.
    pub function: String,
    pub file: Option<String>,
    pub line: Option<u32>,
    /// The native module (shared object), for native frames.
    pub module: String,
    pub pc: u64,
}

pub(crate) fn decode(msg: Cursor<'_>) -> Result<Vec<CallFrame>, WireError> {
    let mut frames = Vec::new();
    msg.for_each(|f| {
        if f.number == 1 {
            frames.push(decode_frame(f.as_message()?)?);
        }
        Ok(())
    })?;
    Ok(frames)
}

fn decode_frame(msg: Cursor<'_>) -> Result<CallFrame, WireError> {
    let mut fr = CallFrame::default();
    msg.for_each(|f| {
        match f.number {
            1 => fr.module = f.as_str()?.to_owned(),
            2 => fr.pc = f.as_u64()?,
            3 => fr.file = Some(f.as_str()?.to_owned()),
            4 => fr.function = f.as_str()?.to_owned(),
            5 => fr.line = Some(f.as_u32()?),
            _ => {}
        }
        Ok(())
    })?;
    Ok(fr)
}
