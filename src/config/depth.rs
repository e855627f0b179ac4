//! A bound on YAML nesting, checked on the text before any YAML parser sees it: a parser walks a
//! 100,000-level document for tens of seconds (and recursion that deep can overflow the stack), while
//! this scan stops at the first line past the limit.

/// Deepest nesting a configuration (or rules) document may have. The shipped presets need 5.
pub const MAX_YAML_DEPTH: usize = 64;

/// Where a document first nests deeper than `limit`: its 1-based line and the depth reached there.
///
/// The count errs on the high side, never the low one: every indentation step of block style, every
/// `- ` that opens a sequence entry on a line, and every open `[` or `{` outside quotes is a level.
pub fn too_deep(text: &str, limit: usize) -> Option<(usize, usize)> {
    let mut indents: Vec<usize> = Vec::new();
    let mut flow = 0usize;
    for (index, line) in text.lines().enumerate() {
        let content = line.trim_start_matches(' ');
        if content.trim().is_empty() || content.starts_with('#') {
            continue;
        }
        let indent = line.len() - content.len();
        if flow == 0 {
            while indents.last().is_some_and(|&top| top > indent) {
                indents.pop();
            }
            if indents.last().is_none_or(|&top| top < indent) {
                indents.push(indent);
            }
        }
        let dashes = sequence_dashes(content);
        let deepest_flow = flow_depth(content, &mut flow);
        let depth = indents.len() + dashes + deepest_flow;
        if depth > limit {
            return Some((index + 1, depth));
        }
    }
    None
}

/// `- - - a` opens three sequences on one line.
fn sequence_dashes(content: &str) -> usize {
    let mut rest = content;
    let mut count = 0;
    while let Some(after) = rest.strip_prefix("- ").or_else(|| rest.strip_prefix("-\t")) {
        count += 1;
        rest = after.trim_start();
    }
    count
}

/// Updates the open flow collections (`[`, `{`) across the line, skipping quoted text and comments;
/// returns the deepest level the line reached.
fn flow_depth(content: &str, open: &mut usize) -> usize {
    let mut deepest = *open;
    let mut quote: Option<char> = None;
    let mut previous = ' ';
    for ch in content.chars() {
        match (quote, ch) {
            (Some('"'), '"') if previous != '\\' => quote = None,
            (Some('\''), '\'') => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(ch),
            (None, '#') if previous.is_whitespace() => break,
            (None, '[' | '{') => {
                *open += 1;
                deepest = deepest.max(*open);
            }
            (None, ']' | '}') => *open = open.saturating_sub(1),
            _ => {}
        }
        previous = ch;
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config;

    #[test]
    fn shipped_presets_are_shallow() {
        for name in config::preset_names() {
            let text = config::layers::embedded(name).unwrap();
            assert_eq!(too_deep(text, 6), None, "{name}");
        }
    }

    #[test]
    fn block_flow_and_sequence_nesting_count() {
        assert_eq!(too_deep("a:\n  b:\n    c: 1\n", 2), Some((3, 3)));
        assert_eq!(too_deep("a:\n  b:\n    c: 1\nd: 2\n", 3), None);
        assert_eq!(too_deep("a: [[[1]]]\n", 3), Some((1, 4)));
        assert_eq!(too_deep("- - - x\n", 3), Some((1, 4)));
        assert_eq!(too_deep("a: \"[[[[[\" # [[[[\n", 1), None);
        assert_eq!(too_deep("a: '[[{{'\n", 1), None);
        let deep = "[".repeat(100_000);
        assert_eq!(too_deep(&deep, 64), Some((1, 100_001)));
    }
}
