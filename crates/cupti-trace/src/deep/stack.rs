//! The NVTX push/pop ranges open in the process, as the launch rule sees them: each thread's
//! frames, one per push, tagged with its domain (a pop ends its own domain's innermost range), and
//! every thread's chained in the order the threads first pushed, hashed into the stratum of every
//! launch made under them.

use super::rule::{fnv, FNV_EMPTY};

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
        fnv(self.bytes())
    }

    fn bytes(&self) -> impl Iterator<Item = u8> + '_ {
        self.frames
            .iter()
            .flat_map(|(d, m)| (*d as u64).to_le_bytes().into_iter().chain(m.to_le_bytes()))
    }
}

/// Every thread's [`Frames`], in the order the threads first pushed a range: a launch on any
/// thread is counted under all of them (the main thread's `train_step/backward` holds the
/// autograd thread's launches). Thread ids never count, so a pool of threads that open the same
/// ranges are one stratum.
#[derive(Debug, Default)]
pub struct ProcessFrames {
    threads: Vec<(u64, Frames)>,
    /// [`Self::hash`], kept up to date at each push and pop: launches outnumber them.
    hash: u64,
}

impl ProcessFrames {
    pub const fn new() -> Self {
        ProcessFrames {
            threads: Vec::new(),
            hash: FNV_EMPTY,
        }
    }

    pub fn push(&mut self, thread: u64, domain: usize, message: u64) {
        match self.threads.iter_mut().find(|(t, _)| *t == thread) {
            Some((_, frames)) => frames.push(domain, message),
            None => {
                let mut frames = Frames::default();
                frames.push(domain, message);
                self.threads.push((thread, frames));
            }
        }
        self.rehash();
    }

    pub fn pop(&mut self, thread: u64, domain: usize) {
        if let Some((_, frames)) = self.threads.iter_mut().find(|(t, _)| *t == thread) {
            frames.pop(domain);
        }
        self.rehash();
    }

    /// Every thread's open ranges as one number; threads with none open add nothing.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    fn rehash(&mut self) {
        self.hash = fnv(self
            .threads
            .iter()
            .filter(|(_, f)| !f.frames.is_empty())
            .flat_map(|(_, f)| f.bytes().chain([0xff; 8])));
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
    fn a_launch_on_a_thread_with_no_range_counts_under_the_others() {
        let (main, autograd) = (1, 2);
        let mut p = ProcessFrames::new();
        assert_eq!(p.hash(), fnv([]), "nothing open");
        p.push(main, 0, fnv(*b"train_step"));
        p.push(main, 0, fnv(*b"backward"));
        let backward = p.hash();
        p.pop(main, 0);
        p.push(main, 0, fnv(*b"optimizer"));
        assert_ne!(p.hash(), backward, "another region of the main thread");
        p.pop(main, 0);
        p.push(main, 0, fnv(*b"backward"));
        assert_eq!(
            p.hash(),
            backward,
            "the autograd thread's launches are in backward"
        );
        p.push(autograd, 0, fnv(*b"op"));
        let inner = p.hash();
        assert_ne!(
            inner, backward,
            "a range the autograd thread opens nests inside"
        );
        p.pop(autograd, 0);
        assert_eq!(
            p.hash(),
            backward,
            "a thread whose ranges closed adds nothing"
        );
        let mut pool = ProcessFrames::new();
        pool.push(7, 0, fnv(*b"train_step"));
        pool.push(7, 0, fnv(*b"backward"));
        assert_eq!(pool.hash(), backward, "thread ids never count");
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
