//! The NVTX push/pop ranges open in the process, as the launch rule sees them: each thread's
//! frames, one per push, tagged with its domain (a pop ends its own domain's innermost range);
//! every thread's together and the launching thread's own are hashed into the stratum of every
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

/// Every thread's [`Frames`] with ranges open: a launch on any thread is counted under all of them
/// (the main thread's `train_step/backward` holds the autograd thread's launches), as
/// `--nvtx-push-pop-scope process` sees it, and under its own thread's, as `thread` sees it, so a
/// stratum never spans two regions of either scope. Thread ids and the threads' order never count:
/// a pool of threads that open the same ranges are one stratum.
#[derive(Debug)]
pub struct ProcessFrames {
    threads: Vec<(u64, Frames)>,
    /// The open ranges of every thread as one number, kept up to date at each push and pop:
    /// launches outnumber them.
    every_thread: u64,
}

impl Default for ProcessFrames {
    fn default() -> Self {
        Self::new()
    }
}

impl ProcessFrames {
    pub const fn new() -> Self {
        ProcessFrames {
            threads: Vec::new(),
            every_thread: FNV_EMPTY,
        }
    }

    /// Whether no thread has a push/pop range open.
    pub fn is_empty(&self) -> bool {
        self.threads.is_empty()
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

    /// A pop on `thread`; a thread left with no range open is forgotten.
    pub fn pop(&mut self, thread: u64, domain: usize) {
        if let Some(at) = self.threads.iter().position(|(t, _)| *t == thread) {
            self.threads[at].1.pop(domain);
            if self.threads[at].1.frames.is_empty() {
                self.threads.swap_remove(at);
            }
        }
        self.rehash();
    }

    /// The stratum word of a launch on `thread`: every thread's open ranges, then its own.
    pub fn hash(&self, thread: u64) -> u64 {
        let own = self
            .threads
            .iter()
            .find(|(t, _)| *t == thread)
            .map_or(FNV_EMPTY, |(_, f)| f.hash());
        fnv(self
            .every_thread
            .to_le_bytes()
            .into_iter()
            .chain(own.to_le_bytes()))
    }

    fn rehash(&mut self) {
        let mut each: Vec<u64> = self.threads.iter().map(|(_, f)| f.hash()).collect();
        each.sort_unstable();
        self.every_thread = fnv(each.iter().flat_map(|h| h.to_le_bytes()));
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
        let nothing = p.hash(autograd);
        assert_eq!(ProcessFrames::default().hash(autograd), nothing);
        p.push(main, 0, fnv(*b"train_step"));
        p.push(main, 0, fnv(*b"backward"));
        let backward = p.hash(autograd);
        assert_ne!(backward, nothing, "the main thread's ranges count");
        assert_ne!(
            p.hash(main),
            backward,
            "and the launching thread's own (thread scope)"
        );
        p.pop(main, 0);
        p.push(main, 0, fnv(*b"optimizer"));
        assert_ne!(
            p.hash(autograd),
            backward,
            "another region of the main thread"
        );
        p.pop(main, 0);
        p.push(main, 0, fnv(*b"backward"));
        assert_eq!(p.hash(autograd), backward, "the same region again");
        p.push(autograd, 0, fnv(*b"op"));
        assert_ne!(
            p.hash(autograd),
            backward,
            "a range the autograd thread opens counts"
        );
        p.pop(autograd, 0);
        assert_eq!(
            p.hash(autograd),
            backward,
            "a thread whose ranges closed adds nothing"
        );
        p.pop(main, 0);
        p.pop(main, 0);
        assert_eq!(
            p.hash(autograd),
            nothing,
            "a thread with none open is forgotten"
        );
        let mut pool = ProcessFrames::new();
        pool.push(9, 0, fnv(*b"other"));
        pool.push(7, 0, fnv(*b"train_step"));
        pool.push(7, 0, fnv(*b"backward"));
        let mut swapped = ProcessFrames::new();
        swapped.push(3, 0, fnv(*b"train_step"));
        swapped.push(3, 0, fnv(*b"backward"));
        swapped.push(4, 0, fnv(*b"other"));
        assert_eq!(
            pool.hash(8),
            swapped.hash(5),
            "thread ids and order never count"
        );
    }

    #[test]
    fn a_process_with_no_range_open_is_empty() {
        let mut p = ProcessFrames::new();
        assert!(p.is_empty());
        p.push(1, 0, 7);
        p.push(2, 0, 8);
        p.pop(1, 0);
        assert!(!p.is_empty(), "thread 2's range is open");
        p.pop(2, 0);
        assert!(p.is_empty(), "every range ended");
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
