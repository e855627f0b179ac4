//! A worker's events nested past `regions.max_depth`, refused before any phase is built. A stack
//! that deep because events are duplicated (each copy nesting inside its twin: the same `id`, or the
//! same name, start and end) is refused naming the duplicated event, its worker and its start, not
//! blamed on ranges left open.

use std::collections::HashMap;

use super::phases::deepest;
use crate::error::{Error, Result};
use crate::profiler::neuron::error::NeuronError;
use crate::profiler::neuron::readers::model::system::{SystemEvent, WorkerKey};

/// `Ok` when the events of worker `key` nest at most `limit` deep (read from `sources`).
pub fn check(
    key: &WorkerKey,
    events: &[&SystemEvent],
    limit: usize,
    sources: &[String],
) -> Result<()> {
    let depth = deepest(events);
    if depth <= limit {
        return Ok(());
    }
    let Some((event, copies)) = duplicated(events, limit) else {
        return Err(Error::RegionsTooDeep {
            depth,
            limit,
            sources: sources.join(", "),
        });
    };
    let id = event.id.map(|id| format!(" (id {id})")).unwrap_or_default();
    Err(NeuronError::parse(
        sources.join(", "),
        format!(
            "{}, event `{}`{id} starting at {} ns",
            key.label(),
            event.name,
            event.start_ns
        ),
        format!(
            "the events are duplicated: {copies} copies of this event (the same id, or the same \
             name, start and end) each nest inside the one before, and with the other duplicated \
             events make the stack {depth} levels deep, past regions.max_depth ({limit}); without \
             the copies it fits. The profile holds the same rows more than once (a table part \
             written twice, or rows copied under ids of their own): export the profile again, or \
             remove the duplicate rows"
        ),
    )
    .into())
}

/// An event open on the stack, as [`deepest`] nests them.
struct Open<'a> {
    end: u64,
    event: &'a SystemEvent,
    /// Whether a twin of it was open below it when it was pushed.
    twin: bool,
}

/// The lowest event pushed while a twin of it was open, on the stack where it first grows past
/// `limit`, and how many copies of it that stack holds; `None` unless the stack would fit
/// everywhere without such events.
fn duplicated<'a>(events: &[&'a SystemEvent], limit: usize) -> Option<(&'a SystemEvent, usize)> {
    let mut stack: Vec<Open> = Vec::new();
    let mut ids: HashMap<u64, usize> = HashMap::new();
    let mut spans: HashMap<(&str, u64, u64), usize> = HashMap::new();
    let mut twins = 0;
    let mut found = None;
    for &e in events {
        while stack.last().is_some_and(|top| top.end <= e.start_ns) {
            let Some(top) = stack.pop() else { break };
            twins -= usize::from(top.twin);
            if let Some(id) = top.event.id {
                *ids.entry(id).or_default() -= 1;
            }
            *spans.entry(span_key(top.event)).or_default() -= 1;
        }
        let open_id = e.id.is_some_and(|id| ids.get(&id).is_some_and(|&n| n > 0));
        let twin = open_id || spans.get(&span_key(e)).is_some_and(|&n| n > 0);
        if let Some(id) = e.id {
            *ids.entry(id).or_default() += 1;
        }
        *spans.entry(span_key(e)).or_default() += 1;
        let end = stack.last().map_or(e.end_ns, |top| e.end_ns.min(top.end));
        stack.push(Open {
            end,
            event: e,
            twin,
        });
        twins += usize::from(twin);
        if stack.len() - twins > limit {
            return None;
        }
        if stack.len() > limit && found.is_none() {
            let first = stack.iter().find(|o| o.twin)?.event;
            found = Some((first, stack.iter().filter(|o| same(o.event, first)).count()));
        }
    }
    found
}

fn span_key(e: &SystemEvent) -> (&str, u64, u64) {
    (e.name.as_str(), e.start_ns, e.end_ns)
}

/// Whether `a` and `b` are copies of one event: the same id, or the same name, start and end.
fn same(a: &SystemEvent, b: &SystemEvent) -> bool {
    (a.id.is_some() && a.id == b.id) || span_key(a) == span_key(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(id: u64, name: &str, start: u64, end: u64) -> SystemEvent {
        SystemEvent {
            id: Some(id),
            name: name.into(),
            start_ns: start,
            end_ns: end,
            ..SystemEvent::default()
        }
    }

    #[test]
    fn copies_that_make_the_stack_deep_are_named_and_a_loop_is_not_blamed_on_them() {
        // a step and its execution, each written three times under ids of their own
        let events: Vec<SystemEvent> = (0..3)
            .map(|i| ev(i, "step", 0, 100))
            .chain((0..3).map(|i| ev(10 + i, "execute", 10, 50)))
            .collect();
        let refs: Vec<&SystemEvent> = events.iter().collect();
        let (event, copies) = duplicated(&refs, 4).unwrap();
        assert_eq!(
            (event.name.as_str(), event.id, copies),
            ("step", Some(1), 3)
        );
        // the same id under another name and span is a copy too
        let by_id = [
            ev(7, "step", 0, 100),
            ev(7, "step_renamed", 5, 90),
            ev(8, "x", 6, 9),
        ];
        let refs: Vec<&SystemEvent> = by_id.iter().collect();
        assert_eq!(duplicated(&refs, 2).unwrap().0.name, "step_renamed");
        // a range entered in a loop, each a new event: not duplicates
        let nested: Vec<SystemEvent> = (0..6).map(|i| ev(i, "step", i, 100 - i)).collect();
        let refs: Vec<&SystemEvent> = nested.iter().collect();
        assert!(duplicated(&refs, 4).is_none());
        // a deep loop with one duplicate in it: the copy is not the cause
        let mut mixed = nested.clone();
        mixed.insert(1, ev(0, "step", 0, 100));
        let refs: Vec<&SystemEvent> = mixed.iter().collect();
        assert!(duplicated(&refs, 4).is_none());
    }
}
