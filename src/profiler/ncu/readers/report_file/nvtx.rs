//! A result's NVTX state: for every thread the push/pop stack of every domain (outermost first), the
//! open start/end ranges, and the domains with their registered strings. Names are resolved the way
//! ncu prints them: a domain by its id, a range pushed with a registered message by its string.

pub use super::nvtx_attributes::{NvtxAttributes, NvtxMessage, NvtxPayload};
pub use super::nvtx_names::DEFAULT_DOMAIN;
use super::nvtx_names::{decode_domain, Names};
use super::wire::{Cursor, WireError};

/// The name ncu gives the default domain (its id is `NvtxState.DefaultDomain`, 0 in practice).

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct NvtxState {
    /// Every thread ncu tracked, in file order, including threads whose stacks are all empty.
    pub threads: Vec<NvtxThread>,
    /// Open start/end ranges, per domain in file order.
    pub start_end: Vec<StartEndRange>,
    /// `true` when push/pop ranges were tracked per process (`--nvtx-push-pop-scope process`).
    pub process_scope: bool,
}

impl NvtxState {
    /// The thread with this id, if ncu tracked it.
    pub fn thread(&self, tid: u32) -> Option<&NvtxThread> {
        self.threads.iter().find(|t| t.tid == tid)
    }
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct NvtxThread {
    pub tid: u32,
    pub domains: Vec<PushPopStack>,
}

impl NvtxThread {
    /// Whether any domain of the thread has an open range (ncu's CSV cells list only such threads).
    pub fn has_ranges(&self) -> bool {
        self.domains.iter().any(|d| !d.stack.is_empty())
    }
}

/// One domain's push/pop stack on one thread.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct PushPopStack {
    pub domain_id: u64,
    pub domain: String,
    /// Outermost range first.
    pub stack: Vec<NvtxRange>,
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct NvtxRange {
    pub name: String,
    /// The range instance's id: two pushes of the same name get different ids (0 when ncu wrote none).
    pub id: u64,
    /// The id of the last API call made while the range was the innermost one.
    pub last_api_call_id: Option<u64>,
    pub attributes: Option<NvtxAttributes>,
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct StartEndRange {
    pub id: u64,
    pub domain_id: u64,
    pub domain: String,
    pub name: String,
    /// The thread that started the range.
    pub start_tid: Option<u32>,
    pub last_api_call_id: Option<u64>,
    pub attributes: Option<NvtxAttributes>,
}

pub(crate) fn decode(msg: Cursor<'_>) -> Result<NvtxState, WireError> {
    // Domains come first in ncu's files, but protobuf allows any order: collect them before resolving.
    let mut domains = Vec::new();
    let mut default_domain = 0;
    let mut state = NvtxState::default();
    msg.for_each(|f| {
        match f.number {
            1 => domains.push(decode_domain(f.as_message()?)?),
            4 => default_domain = f.as_u64()?,
            5 => state.process_scope = f.as_u64()? == 1,
            _ => {}
        }
        Ok(())
    })?;
    let names = Names::new(domains, default_domain);
    msg.for_each(|f| {
        match f.number {
            2 => state.threads.push(decode_thread(f.as_message()?, &names)?),
            3 => decode_start_end_domain(f.as_message()?, &names, &mut state.start_end)?,
            _ => {}
        }
        Ok(())
    })?;
    Ok(state)
}

fn decode_thread(msg: Cursor<'_>, names: &Names<'_>) -> Result<NvtxThread, WireError> {
    let mut t = NvtxThread::default();
    msg.for_each(|f| {
        match f.number {
            1 => t.tid = f.as_u32()?,
            2 => t
                .domains
                .push(decode_push_pop_domain(f.as_message()?, names)?),
            _ => {}
        }
        Ok(())
    })?;
    Ok(t)
}

fn decode_push_pop_domain(msg: Cursor<'_>, names: &Names<'_>) -> Result<PushPopStack, WireError> {
    let mut domain_id = 0;
    msg.for_each(|f| {
        if f.number == 1 {
            domain_id = f.as_u64()?;
        }
        Ok(())
    })?;
    let mut stack = Vec::new();
    msg.for_each(|f| {
        if f.number == 3 {
            stack.push(decode_push_pop_range(f.as_message()?, domain_id, names)?);
        }
        Ok(())
    })?;
    Ok(PushPopStack {
        domain_id,
        domain: names.domain_name(domain_id),
        stack,
    })
}

fn decode_push_pop_range(
    msg: Cursor<'_>,
    domain: u64,
    names: &Names<'_>,
) -> Result<NvtxRange, WireError> {
    let mut r = NvtxRange::default();
    msg.for_each(|f| {
        match f.number {
            1 => r.name = f.as_str()?.to_owned(),
            2 => {
                r.attributes = Some(super::nvtx_attributes::decode(
                    f.as_message()?,
                    domain,
                    names,
                )?)
            }
            3 => r.last_api_call_id = Some(f.as_u64()?),
            4 => r.id = f.as_u64()?,
            _ => {}
        }
        Ok(())
    })?;
    fill_name(&mut r.name, r.attributes.as_ref());
    Ok(r)
}

fn decode_start_end_domain(
    msg: Cursor<'_>,
    names: &Names<'_>,
    out: &mut Vec<StartEndRange>,
) -> Result<(), WireError> {
    let mut domain_id = 0;
    msg.for_each(|f| {
        if f.number == 1 {
            domain_id = f.as_u64()?;
        }
        Ok(())
    })?;
    msg.for_each(|f| {
        if f.number == 3 {
            out.push(decode_start_end_range(f.as_message()?, domain_id, names)?);
        }
        Ok(())
    })
}

fn decode_start_end_range(
    msg: Cursor<'_>,
    domain_id: u64,
    names: &Names<'_>,
) -> Result<StartEndRange, WireError> {
    let mut r = StartEndRange {
        domain_id,
        domain: names.domain_name(domain_id),
        ..StartEndRange::default()
    };
    msg.for_each(|f| {
        match f.number {
            1 => r.id = f.as_u64()?,
            2 => r.name = f.as_str()?.to_owned(),
            3 => {
                r.attributes = Some(super::nvtx_attributes::decode(
                    f.as_message()?,
                    domain_id,
                    names,
                )?)
            }
            4 => r.last_api_call_id = Some(f.as_u64()?),
            5 => r.start_tid = Some(f.as_u32()?),
            _ => {}
        }
        Ok(())
    })?;
    fill_name(&mut r.name, r.attributes.as_ref());
    Ok(r)
}

/// ncu names a range by its message when the name field is empty (a registered or unicode message).
fn fill_name(name: &mut String, attributes: Option<&NvtxAttributes>) {
    if name.is_empty() {
        if let Some(text) = attributes
            .and_then(|a| a.message.as_ref())
            .and_then(|m| m.text.as_ref())
        {
            name.clone_from(text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Encodes a length-delimited field.
    fn bytes(number: u8, body: &[u8]) -> Vec<u8> {
        let mut out = vec![number << 3 | 2, u8::try_from(body.len()).unwrap()];
        out.extend_from_slice(body);
        out
    }

    fn varint(number: u8, v: u8) -> Vec<u8> {
        vec![number << 3, v]
    }

    #[test]
    fn a_range_without_a_name_is_named_by_its_registered_message() {
        // Domain 1 "NCCL" registers string 5 = "ncclAllReduce"; thread 42 pushed a range in domain 1
        // with an empty name and a registered message with handle 5.
        let registered = [varint(1, 5), bytes(2, b"ncclAllReduce")].concat();
        let domain = [varint(1, 1), bytes(2, b"NCCL"), bytes(3, &registered)].concat();
        let message = [varint(1, 3), varint(3, 5)].concat();
        let attributes = [varint(1, 3), varint(2, 0), bytes(5, &message)].concat();
        let range = [bytes(1, b""), bytes(2, &attributes), varint(4, 9)].concat();
        let stack = [varint(1, 1), bytes(3, &range)].concat();
        let thread = [varint(1, 42), bytes(2, &stack)].concat();
        let state = [bytes(1, &domain), bytes(2, &thread), varint(4, 0)].concat();
        let s = decode(Cursor::new(&state, 0)).unwrap();
        let d = &s.thread(42).unwrap().domains[0];
        assert_eq!(d.domain, "NCCL");
        assert_eq!(
            (d.stack[0].name.as_str(), d.stack[0].id),
            ("ncclAllReduce", 9)
        );
        let m = d.stack[0]
            .attributes
            .as_ref()
            .unwrap()
            .message
            .as_ref()
            .unwrap();
        assert_eq!((m.kind, m.handle), ("registered", Some(5)));
    }

    #[test]
    fn an_unlisted_domain_is_named_by_its_id_and_the_default_one_as_ncu_prints_it() {
        let stack = [varint(1, 7), bytes(3, &bytes(1, b"x"))].concat();
        let default = [varint(1, 0), bytes(3, &bytes(1, b"y"))].concat();
        let thread = [varint(1, 1), bytes(2, &stack), bytes(2, &default)].concat();
        let s = decode(Cursor::new(&bytes(2, &thread), 0)).unwrap();
        let names: Vec<&str> = s.threads[0]
            .domains
            .iter()
            .map(|d| d.domain.as_str())
            .collect();
        assert_eq!(names, ["7", DEFAULT_DOMAIN]);
    }
}
