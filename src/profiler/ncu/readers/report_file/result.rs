//! Decoding one result message into a [`ResultRecord`]: the launch facts are read in one pass over
//! the message's top-level fields; sections (the bulk of every result) and everything else profile-run
//! does not read are skipped by length without being touched.

use std::path::Path;

use super::record::{KernelNames, Layout, ProcessInfo, ResultKind, ResultRecord};
use super::strings::StringTable;
use super::wire::{Cursor, Field, WireError};

static KERNEL: Layout = Layout {
    thread_id: 1,
    api_call_id: 2,
    metrics: 13,
    rules: 19,
    nvtx: 21,
    context_id: 22,
    stream_id: Some(23),
    cpu_stack: 28,
    python_stack: 32,
    sections: Some(17),
};

static RANGE: Layout = Layout {
    thread_id: 1,
    api_call_id: 2,
    metrics: 4,
    rules: 20,
    nvtx: 10,
    context_id: 11,
    stream_id: None,
    cpu_stack: 14,
    python_stack: 17,
    sections: Some(7),
};

static CMDLIST: Layout = Layout {
    thread_id: 1,
    api_call_id: 2,
    metrics: 4,
    rules: 21,
    nvtx: 10,
    context_id: 11,
    stream_id: Some(12),
    cpu_stack: 16,
    python_stack: 22,
    sections: None,
};

static GRAPH: Layout = Layout {
    thread_id: 1,
    api_call_id: 2,
    metrics: 4,
    rules: 22,
    nvtx: 10,
    context_id: 11,
    stream_id: Some(12),
    cpu_stack: 16,
    python_stack: 19,
    sections: None,
};

fn layout(kind: ResultKind) -> &'static Layout {
    match kind {
        ResultKind::Kernel => &KERNEL,
        ResultKind::Range => &RANGE,
        ResultKind::Cmdlist => &CMDLIST,
        ResultKind::Graph => &GRAPH,
    }
}

/// What a record borrows from the reader while it is visited.
pub(crate) struct Context<'a> {
    pub path: &'a Path,
    pub process: &'a ProcessInfo,
    pub strings: &'a StringTable,
}

pub(crate) fn decode<'a>(
    kind: ResultKind,
    index: u64,
    bytes: &'a [u8],
    offset: u64,
    cx: &Context<'a>,
) -> Result<ResultRecord<'a>, WireError> {
    let layout = layout(kind);
    let body = Cursor::new(bytes, offset);
    let mut r = ResultRecord {
        index,
        kind,
        offset,
        process: cx.process,
        thread_id: 0,
        api_call_id: 0,
        kernel: None,
        grid_size: None,
        block_size: None,
        context_id: None,
        stream_id: None,
        body,
        layout,
        strings: cx.strings,
        path: cx.path,
    };
    let mut names = KernelNames {
        mangled: "",
        function: "",
        demangled: "",
    };
    body.for_each(|f| {
        let n = f.number;
        if n == layout.thread_id {
            r.thread_id = f.as_u32()?;
        } else if n == layout.api_call_id {
            r.api_call_id = f.as_u64()?;
        } else if n == layout.context_id {
            r.context_id = Some(f.as_u32()?);
        } else if Some(n) == layout.stream_id {
            r.stream_id = Some(f.as_u32()?);
        } else if kind == ResultKind::Kernel {
            kernel_field(f, &mut names, &mut r)?;
        }
        Ok(())
    })?;
    if kind == ResultKind::Kernel {
        r.kernel = Some(names);
    }
    Ok(r)
}

/// The fields only kernel results have: names and launch dimensions.
fn kernel_field<'a>(
    f: Field<'a>,
    names: &mut KernelNames<'a>,
    r: &mut ResultRecord<'a>,
) -> Result<(), WireError> {
    match f.number {
        5 => names.mangled = f.as_str()?,
        6 => names.function = f.as_str()?,
        7 => names.demangled = f.as_str()?,
        10 => r.grid_size = Some(dim3(f.as_message()?)?),
        11 => r.block_size = Some(dim3(f.as_message()?)?),
        _ => {}
    }
    Ok(())
}

fn dim3(msg: Cursor<'_>) -> Result<[u64; 3], WireError> {
    let mut d = [0u64; 3];
    msg.for_each(|f| {
        if (1..=3).contains(&f.number) {
            d[f.number as usize - 1] = f.as_u64()?;
        }
        Ok(())
    })?;
    Ok(d)
}
