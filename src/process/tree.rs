//! Ending a profiler that does not stop after a signal: it and every process it started. ncu shares
//! profile-run's process group (so a terminal's Ctrl-C and a supervisor's group kill reach it), so
//! its process group cannot be killed without killing profile-run and its caller; the process tree
//! is found through `/proc` instead.

use std::collections::BTreeMap;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// Every process whose parent chain leads to `root`, `root` included, read from `/proc` once.
pub fn descendants(root: u32) -> Vec<u32> {
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
    let mut tree = vec![root];
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

/// Sends SIGKILL to `root` and every process it started. The tree is read before the first kill,
/// because children of a killed process are re-parented and could no longer be found.
pub fn kill_tree(root: u32) {
    for pid in descendants(root) {
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
