//! Every relative link in README.md and docs/*.md points at a file that exists and, with a `#…`
//! into a Markdown file, at one of its headings (by GitHub's slug rules) or `<a id>` anchors, so a
//! renamed heading or moved page cannot leave a dead link behind.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use crate::common::repo;

/// README.md and every docs/*.md.
fn documents() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    docs.insert(0, repo().join("README.md"));
    docs
}

fn parser(text: &str) -> Parser<'_> {
    Parser::new_ext(
        text,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_FOOTNOTES,
    )
}

/// GitHub's anchor for a heading's text: lower case; letters, digits, `-` and `_` kept, spaces
/// as `-`, everything else (punctuation, symbols) dropped.
fn slug(text: &str) -> String {
    text.to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The `id="…"` and `name="…"` values of an HTML fragment (`<a id="x"></a>`).
fn html_ids(html: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for attribute in ["id=\"", "name=\""] {
        let mut rest = html;
        while let Some(at) = rest.find(attribute) {
            let value = &rest[at + attribute.len()..];
            let Some(end) = value.find('"') else { break };
            ids.push(value[..end].to_string());
            rest = &value[end..];
        }
    }
    ids
}

/// The anchors a link can name in a Markdown file: every heading's slug, a repeated one with
/// `-1`, `-2`, … as GitHub numbers them, and every HTML `id` or `name`.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut anchors = BTreeSet::new();
    let mut heading: Option<String> = None;
    for event in parser(text) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => {
                let base = slug(&heading.take().unwrap_or_default());
                let mut candidate = base.clone();
                let mut n = 0;
                while anchors.contains(&candidate) {
                    n += 1;
                    candidate = format!("{base}-{n}");
                }
                anchors.insert(candidate);
            }
            Event::Text(t) | Event::Code(t) if heading.is_some() => {
                heading.get_or_insert_with(String::new).push_str(&t);
            }
            Event::Html(html) | Event::InlineHtml(html) => anchors.extend(html_ids(&html)),
            _ => {}
        }
    }
    anchors
}

/// Each link and image target of a Markdown file, with the line it is on.
fn links(text: &str) -> Vec<(String, usize)> {
    parser(text)
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => Some((
                dest_url.to_string(),
                text[..range.start].matches('\n').count() + 1,
            )),
            _ => None,
        })
        .collect()
}

/// Why `target`, linked from `from`, does not resolve; `None` when it does (or is not relative).
fn broken(from: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
    let file = if path.is_empty() {
        from.to_path_buf()
    } else {
        from.parent().unwrap().join(path)
    };
    if !file.exists() {
        return Some(format!("{} does not exist", file.display()));
    }
    if anchor.is_empty() || file.extension().is_none_or(|e| e != "md") {
        return None;
    }
    let known = anchors(&std::fs::read_to_string(&file).unwrap());
    (!known.contains(anchor)).then(|| {
        format!(
            "{} has no heading or anchor `{anchor}`",
            file.strip_prefix(repo()).unwrap_or(&file).display()
        )
    })
}

#[test]
fn slugs_follow_githubs_rules() {
    assert_eq!(slug("Start/end ranges"), "startend-ranges");
    assert_eq!(
        slug("Advice: ncu's rule results"),
        "advice-ncus-rule-results"
    );
    assert_eq!(slug("report.md templates"), "reportmd-templates");
    assert_eq!(slug("`report.compare` and _x_"), "reportcompare-and-_x_");
    let text = "# A\n\n## A\n\n<a id=\"kept\"></a>\n\n## `B`/c\n";
    let found: Vec<String> = anchors(text).into_iter().collect();
    assert_eq!(found, ["a", "a-1", "bc", "kept"]);
}

#[test]
fn every_relative_link_and_anchor_in_the_docs_resolves() {
    let mut dead = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for (target, line) in links(&text) {
            checked += 1;
            if let Some(why) = broken(&doc, &target) {
                let shown = doc.strip_prefix(repo()).unwrap().display().to_string();
                dead.push(format!("{shown}:{line}: ({target}): {why}"));
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} links found: is the parser reading the docs?"
    );
    assert!(dead.is_empty(), "dead links:\n{}", dead.join("\n"));
}
