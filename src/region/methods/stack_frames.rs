//! `stack_frames`: regions along call stacks. The key of an item is the path of its first `depth`
//! frames (outermost first); on a timeline, consecutive items (in start order) with one key are one
//! invocation, named by the key's innermost frame and numbered in time order (`fused_mlp[0]`,
//! `fused_mlp[1]`…). An item without that key ends the invocation when it starts
//! after the invocation's last end; one running alongside (another engine) does not.

use super::{number, Item, Members, Span, Spans};

/// The region key of a stack at `depth` frames, if the stack is that deep.
pub fn key(stack: &[String], depth: usize) -> Option<String> {
    (depth > 0 && stack.len() >= depth).then(|| stack[..depth].join("/"))
}

struct Run {
    key: String,
    /// The innermost frame of the key: the region's name.
    label: String,
    start: u64,
    end: u64,
    members: Vec<usize>,
}

/// The invocations of a timeline at `depth` frames.
pub fn regions(items: &[Item], depth: usize) -> Spans {
    let mut runs: Vec<Run> = Vec::new();
    let mut current: Option<Run> = None;
    for (n, item) in items.iter().enumerate() {
        current = match (current, key(&item.stack, depth)) {
            (Some(mut run), Some(k)) if run.key == k => {
                run.end = run.end.max(item.end_ns);
                run.members.push(n);
                Some(run)
            }
            (cur, Some(k)) => {
                runs.extend(cur);
                Some(Run {
                    key: k,
                    label: item.stack[depth - 1].clone(),
                    start: item.start_ns,
                    end: item.end_ns,
                    members: vec![n],
                })
            }
            (Some(run), None) if item.start_ns >= run.end => {
                runs.push(run);
                None
            }
            (cur, None) => cur,
        };
    }
    runs.extend(current);
    let mut spans: Vec<Span> = runs
        .into_iter()
        .map(|r| Span {
            name: r.label.clone(),
            base: r.label,
            index: 0,
            start_ns: r.start,
            end_ns: r.end,
            members: Members::Items(r.members),
        })
        .collect();
    number(&mut spans);
    for s in &mut spans {
        s.name = format!("{}[{}]", s.base, s.index);
    }
    let notes = if spans.is_empty() {
        vec![format!(
            "no call stack is {depth} frames deep; lower `regions.auto.depth`"
        )]
    } else {
        Vec::new()
    };
    Spans { spans, notes }
}
