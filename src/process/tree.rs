//! Ending a profiler that does not stop after a signal: it and every process it started. ncu shares
//! profile-run's process group (so a terminal's Ctrl-C and a supervisor's group kill reach it), so
//! its process group cannot be killed without killing profile-run and its caller; the process tree,
//! and every other process still holding its output pipe, are found through `/proc` instead.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// Every process whose parent chain leads to `root`, `root` included, read from `/proc` once.
pub fn descendants(root: u32) -> Vec<u32> {
    subtree(&children(), &[root])
}

/// Each process's children, read from `/proc`.
fn children() -> BTreeMap<u32, Vec<u32>> {
    let mut children: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
                continue;
            };
            if let Some(parent) = parent_of(pid) {
                children.entry(parent).or_default().push(pid);
            }
        }
    }
    children
}

/// `roots` and every process whose parent chain leads to one of them.
fn subtree(children: &BTreeMap<u32, Vec<u32>>, roots: &[u32]) -> Vec<u32> {
    let mut tree = roots.to_vec();
    let mut next = 0;
    while next < tree.len() {
        for &kid in children.get(&tree[next]).into_iter().flatten() {
            if !tree.contains(&kid) {
                tree.push(kid);
            }
        }
        next += 1;
    }
    tree
}

/// The parent pid from `/proc/PID/stat`: the fourth field, read after the last `)` because the
/// command name (second field) may itself hold spaces and parentheses.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// The pipe `pid`'s stdout is connected to (`pipe:[inode]`), read right after the spawn so the
/// holders of the profiler's output can be found later, when the profiler itself may be gone.
pub fn stdout_pipe(pid: u32) -> Option<String> {
    let target = std::fs::read_link(format!("/proc/{pid}/fd/1")).ok()?;
    let target = target.to_string_lossy().into_owned();
    target.starts_with("pipe:").then_some(target)
}

/// Every process other than this one holding `pipe` (as from [`stdout_pipe`]) open: processes that
/// left the profiler's tree (re-parented daemons) but still keep its output open.
pub fn pipe_holders(pipe: &str) -> Vec<u32> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|fds| {
                fds.flatten()
                    .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| t.as_os_str() == pipe))
            })
        })
        .collect()
}

/// Sends SIGKILL to `root` and every process it started. The tree is read before the first kill,
/// because children of a killed process are re-parented and could no longer be found.
pub fn kill_tree(root: u32) {
    kill_all(&descendants(root));
}

/// Sends SIGTERM to `root` and every process it started: a program whose work is done is asked to
/// end, as a terminal's Ctrl-C would.
pub fn terminate_tree(root: u32) {
    for pid in descendants(root) {
        let _ = kill(Pid::from_raw(pid as i32), Signal::SIGTERM);
    }
}

/// A workload asked to end so that its profiler finishes as it does when its workload ends: every
/// process the profiler started gets SIGTERM once, the profiler itself never. Processes those start
/// afterwards (a launcher starting its workers) are told at the next [`Stopping::tell_new`]; a
/// process the profiler itself starts afterwards is not: it is the profiler's, not the workload's.
#[derive(Debug)]
pub struct Stopping {
    /// The profiler, whose descendants the workload's processes are.
    root: u32,
    since: Instant,
    /// Every process told so far.
    told: BTreeSet<u32>,
    scanned: Instant,
    /// Whether what was left of the workload after the grace period was killed.
    killed: bool,
}

/// How often the process tree is read again for processes started after the stop.
const RESCAN: Duration = Duration::from_millis(100);

impl Stopping {
    /// SIGTERM to every process `profiler` started.
    pub fn start(profiler: u32) -> Stopping {
        let now = Instant::now();
        let workload = descendants(profiler).into_iter().filter(|&p| p != profiler);
        let mut stopping = Stopping {
            root: profiler,
            since: now,
            told: BTreeSet::new(),
            scanned: now,
            killed: false,
        };
        stopping.terminate(workload);
        stopping
    }

    /// When the stop was asked for.
    pub fn since(&self) -> Instant {
        self.since
    }

    /// SIGTERM to the processes the told ones started since the last round, at most every 100 ms.
    pub fn tell_new(&mut self) {
        if self.scanned.elapsed() < RESCAN || self.told.is_empty() {
            return;
        }
        self.scanned = Instant::now();
        let told: Vec<u32> = self.told.iter().copied().collect();
        // Only inside the profiler's tree: a told process that ended may have its pid reused by
        // one that is none of the workload's. One read of /proc serves both walks.
        let tree = children();
        let inside: BTreeSet<u32> = subtree(&tree, &[self.root]).into_iter().collect();
        let new: Vec<u32> = subtree(&tree, &told)
            .into_iter()
            .filter(|p| inside.contains(p))
            .collect();
        self.terminate(new);
    }

    /// SIGKILL to what is left of the workload (the told processes still in the profiler's tree),
    /// once: the profiler itself is left to write its report however long that takes.
    pub fn kill_remaining(&mut self) {
        if self.killed {
            return;
        }
        self.killed = true;
        let inside: BTreeSet<u32> = descendants(self.root).into_iter().collect();
        let left: Vec<u32> = self.told.intersection(&inside).copied().collect();
        kill_all(&left);
    }

    fn terminate(&mut self, pids: impl IntoIterator<Item = u32>) {
        for pid in pids {
            if self.told.insert(pid) {
                let _ = kill(Pid::from_raw(pid as i32), Signal::SIGTERM);
            }
        }
    }
}

pub fn kill_all(pids: &[u32]) {
    for &pid in pids {
        let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_grandchildren_and_kills_them() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 60 & sleep 60; wait"])
            .spawn()
            .unwrap();
        let root = child.id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while descendants(root).len() < 3 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let tree = descendants(root);
        assert_eq!(tree.len(), 3, "sh and its two sleeps: {tree:?}");
        assert_eq!(tree[0], root);
        kill_tree(root);
        let status = child.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9)
        );
        for pid in &tree[1..] {
            let gone = (0..200).any(|_| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                let dead = stat.is_empty()
                    || stat[stat.rfind(')').unwrap() + 1..]
                        .trim_start()
                        .starts_with('Z');
                if !dead {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                dead
            });
            assert!(gone, "grandchild {pid} still running");
        }
    }
}
