//! The NVTX push/pop ranges open on one thread, as the launch rule sees them: one frame per push,
//! tagged with its domain (a pop ends its own domain's innermost range), hashed into the stratum of
//! every launch made under them.

use super::rule::fnv;

/// One thread's open push/pop ranges, outermost first: (domain handle, 0 for the default
/// domain; hash of the range's message).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Frames {
    frames: Vec<(usize, u64)>,
}

impl Frames {
    pub fn push(&mut self, domain: usize, message: u64) {
        self.frames.push((domain, message));
    }

    /// Ends `domain`'s innermost range; a pop with none open is ignored, as NVTX does.
    pub fn pop(&mut self, domain: usize) {
        if let Some(at) = self.frames.iter().rposition(|(d, _)| *d == domain) {
            self.frames.remove(at);
        }
    }

    /// The stack as one number: equal stacks, equal hashes.
    pub fn hash(&self) -> u64 {
        fnv(self
            .frames
            .iter()
            .flat_map(|(d, m)| (*d as u64).to_le_bytes().into_iter().chain(m.to_le_bytes())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stack_is_its_frames_in_order() {
        let mut f = Frames::default();
        let empty = f.hash();
        f.push(0, fnv(*b"forward"));
        f.push(0, fnv(*b"attn"));
        let attn = f.hash();
        f.pop(0);
        f.push(0, fnv(*b"mlp"));
        assert_ne!(f.hash(), attn, "a sibling region is another stack");
        f.pop(0);
        f.push(0, fnv(*b"attn"));
        assert_eq!(f.hash(), attn, "the same region again is the same stack");
        f.pop(0);
        f.pop(0);
        f.pop(0);
        assert_eq!(f.hash(), empty, "an extra pop is ignored");
    }

    #[test]
    fn a_pop_ends_its_own_domains_range() {
        let mut f = Frames::default();
        f.push(0, 1);
        f.push(7, 2);
        f.push(0, 3);
        f.pop(7);
        let mut g = Frames::default();
        g.push(0, 1);
        g.push(0, 3);
        assert_eq!(f, g);
    }
}
