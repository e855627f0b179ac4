//! NVTX domains and their registered strings in a report file's NVTX state: how a range's domain
//! and a registered name are resolved while the state is decoded.

use super::wire::{Cursor, WireError};

/// The name ncu gives the default domain.
pub const DEFAULT_DOMAIN: &str = "<default domain>";

/// A domain's name and registered strings, needed to resolve names while decoding.
pub(crate) struct Domain<'a> {
    id: u64,
    name: &'a str,
    strings: Vec<(u64, &'a str)>,
}

/// The domains of a capture, to resolve domain and registered-string names while decoding.
pub(crate) struct Names<'a> {
    domains: Vec<Domain<'a>>,
    default_domain: u64,
}

impl<'a> Names<'a> {
    pub(crate) fn new(domains: Vec<Domain<'a>>, default_domain: u64) -> Names<'a> {
        Names {
            domains,
            default_domain,
        }
    }

    fn domain(&self, id: u64) -> Option<&Domain<'_>> {
        self.domains.iter().find(|d| d.id == id)
    }

    pub(crate) fn domain_name(&self, id: u64) -> String {
        match self.domain(id) {
            Some(d) if !d.name.is_empty() => d.name.to_owned(),
            _ if id == self.default_domain => DEFAULT_DOMAIN.to_owned(),
            _ => id.to_string(),
        }
    }

    pub(crate) fn registered(&self, domain: u64, handle: u64) -> Option<String> {
        let d = self.domain(domain)?;
        d.strings
            .iter()
            .find(|(id, _)| *id == handle)
            .map(|(_, s)| (*s).to_owned())
    }
}

pub(crate) fn decode_domain(msg: Cursor<'_>) -> Result<Domain<'_>, WireError> {
    let mut d = Domain {
        id: 0,
        name: "",
        strings: Vec::new(),
    };
    msg.for_each(|f| {
        match f.number {
            1 => d.id = f.as_u64()?,
            2 => d.name = f.as_str()?,
            3 => {
                let (mut id, mut value) = (0, "");
                f.as_message()?.for_each(|g| {
                    match g.number {
                        1 => id = g.as_u64()?,
                        2 => value = g.as_str()?,
                        _ => {}
                    }
                    Ok(())
                })?;
                d.strings.push((id, value));
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(d)
}
