//! A region's identity: its kind (a stack of nesting ranges or a flat mark) and its path of range
//! names, with the parent, depth and display that follow from it.

use serde::Serialize;

/// Ranges on a stack nest (push/pop ranges, a layer path); marks may overlap anything (ranges
/// started and ended independently), so they form flat top-level regions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RegionKind {
    Stack,
    Mark,
}

/// A region's identity: its kind and the chain of range names from the outermost one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegionPath {
    pub kind: RegionKind,
    pub segments: Vec<String>,
}

impl RegionPath {
    pub fn parent(&self) -> Option<RegionPath> {
        (self.segments.len() > 1).then(|| RegionPath {
            kind: self.kind,
            segments: self.segments[..self.segments.len() - 1].to_vec(),
        })
    }

    /// 0 for a top-level region.
    pub fn depth(&self) -> usize {
        self.segments.len().saturating_sub(1)
    }

    pub fn name(&self) -> &str {
        self.segments.last().map(String::as_str).unwrap_or("")
    }

    /// `train_step/forward/layer0`; a `/` or `\` inside a name is escaped with `\` so the path
    /// stays unambiguous.
    pub fn display(&self) -> String {
        display_of(&self.segments)
    }
}

/// The display of a stack of range names (see [`RegionPath::display`]), for callers that hold the
/// names without a [`RegionPath`].
pub fn display_of(segments: &[String]) -> String {
    let mut out = String::new();
    for (i, seg) in segments.iter().enumerate() {
        if i > 0 {
            out.push('/');
        }
        let mut chars = seg.chars().peekable();
        while let Some(ch) = chars.next() {
            // `\@` is already an escape (a default-domain name holding `@`): kept as it is.
            if ch == '\\' && chars.peek() == Some(&'@') {
                out.push(ch);
                continue;
            }
            if ch == '/' || ch == '\\' {
                out.push('\\');
            }
            out.push(ch);
        }
    }
    out
}
