//! An order-preserving parallel map on scoped threads, for the per-scope work after reading
//! (finishing region trees, building report scopes), and the thread count every parallel step uses.
//!
//! Floor: ground. Imports nothing above it. (docs/architecture.md, checked by
//! tests/it/architecture.rs)

use std::sync::Mutex;

/// `threads` as configured (`report.threads`): 0 means one per available core.
pub fn thread_count(threads: usize) -> usize {
    match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// `f` applied to every item on up to `threads` threads (0: one per core), results in the items'
/// order. Items are handed out one at a time, so a few large scopes among many small ones balance.
pub fn map<T: Send, U: Send>(items: Vec<T>, threads: usize, f: impl Fn(T) -> U + Sync) -> Vec<U> {
    let count = items.len();
    let threads = thread_count(threads).min(count);
    if threads <= 1 {
        return items.into_iter().map(f).collect();
    }
    let queue = Mutex::new(items.into_iter().enumerate());
    let mut out: Vec<Option<U>> = (0..count).map(|_| None).collect();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
                        let Some((at, item)) = next else { break };
                        done.push((at, f(item)));
                    }
                    done
                })
            })
            .collect();
        for worker in workers {
            let done = worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            for (at, result) in done {
                out[at] = Some(result);
            }
        }
    });
    out.into_iter()
        .map(|result| result.expect("every item is mapped once"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_on_any_thread_count() {
        let items: Vec<u64> = (0..1000).collect();
        let expected: Vec<u64> = items.iter().map(|i| i * i).collect();
        for threads in [1, 2, 3, 8, 2000] {
            assert_eq!(map(items.clone(), threads, |i| i * i), expected);
        }
        assert!(map(Vec::<u8>::new(), 4, |i| i).is_empty());
    }
}
