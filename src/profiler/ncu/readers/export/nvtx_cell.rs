//! Parsing ncu's NVTX cells in `--page raw` / `--page details` exports.
//!
//! Push/pop column (`thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg`):
//! `TID  "<dom>:<name>:<6 trailing fields>"  "<dom>:<name>:…" ` — the thread id, then one quoted entry
//! per open range, outermost first, two spaces apart. Older ncu wrote fewer trailing fields; the header
//! tells how many. Start/end column (`Id:Domain:Start/Stop_Range:…`): entries `id:<dom>:<name>:…`,
//! quoted or not. A name may itself contain `:`, so the trailing fields are split off from the right
//! and the domain from the left.

use crate::region::Renames;

/// The default NVTX domain as ncu prints it; ranges in it get no domain prefix in region paths.
pub const DEFAULT_DOMAIN: &str = "<default domain>";

/// Placeholder for ranges pushed without a name or message (ncu cannot filter on them either).
pub const UNNAMED: &str = "<unnamed>";

/// Field layout of one NVTX column, read from its header.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellLayout {
    /// Leading fields before the domain (`thread` counts 0 — it is outside the quotes; `Id` counts 1).
    pub leading: usize,
    /// Fields after the range name (`PL_Type … Msg` = 6).
    pub trailing: usize,
    /// Index of the message field among the trailing ones, if the layout has one.
    pub message: Option<usize>,
}

impl CellLayout {
    /// Layout from a header such as `thread Domain:Push/Pop_Range:PL_Type:…:Msg`.
    pub fn from_header(header: &str, range_field: &str) -> Option<CellLayout> {
        let header = header.strip_prefix("thread ").unwrap_or(header);
        let fields: Vec<&str> = header.split(':').collect();
        let range_at = fields.iter().position(|f| *f == range_field)?;
        let domain_at = range_at.checked_sub(1)?;
        let trailing = &fields[range_at + 1..];
        Some(CellLayout {
            leading: domain_at,
            trailing: trailing.len(),
            message: trailing.iter().position(|f| *f == "Msg"),
        })
    }
}

/// One range of a cell.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeEntry {
    pub domain: String,
    pub name: String,
}

impl RangeEntry {
    /// The region path segment: the name, prefixed with `domain@` outside the default domain.
    pub fn segment(&self) -> String {
        path_segment(&self.domain, &self.name)
    }
}

/// A range's region path segment: `domain@name` outside the default domain; in the default domain
/// the name with its `@` escaped (`a\@x`, as ncu's own grammar writes it), so that a default-domain
/// range named `a@x` never merges with range `x` of domain `a`. Both readers (CSV pages and the
/// report file) name segments here.
pub fn path_segment(domain: &str, name: &str) -> String {
    if domain == DEFAULT_DOMAIN || domain.is_empty() {
        name.replace('@', "\\@")
    } else {
        format!("{domain}@{name}")
    }
}

/// Splits a cell into its entries: quoted entries (`"…"  "…"`), or whitespace-separated bare ones.
/// A leading bare thread id (push/pop cells) is dropped.
fn entries(cell: &str) -> Vec<&str> {
    let cell = cell.trim();
    if cell.is_empty() {
        return Vec::new();
    }
    if let Some(first_quote) = cell.find('"') {
        let body = &cell[first_quote..];
        // Entries are `"…"` separated by whitespace. Under `--nvtx-push-pop-scope process` one cell
        // lists several threads, each a bare thread id followed by its entries
        // (`2154  "…"  "…" 2182  "…"`), so a thread id between two entries is skipped. A `"` inside a
        // name is only taken as the end of an entry when what follows is another entry, a thread id
        // and its first entry, or the end of the cell.
        let mut out = Vec::new();
        let mut rest = body;
        while let Some(stripped) = rest.strip_prefix('"') {
            let end = stripped
                .match_indices('"')
                .map(|(i, _)| i)
                .find(|&i| ends_entry(&stripped[i + 1..]))
                .unwrap_or(stripped.len());
            out.push(&stripped[..end]);
            rest = skip_thread_id(stripped.get(end + 1..).unwrap_or("").trim_start());
        }
        return out;
    }
    // Unquoted: the older start/end layout holds one entry (`0:<default domain>:name:none:none`),
    // whose domain itself contains a space.
    vec![cell]
}

/// True when the text after a `"` shows that quote closed an entry.
fn ends_entry(after: &str) -> bool {
    let after = after.trim_start();
    after.is_empty() || skip_thread_id(after).starts_with('"')
}

/// Skips a leading thread id (`2182  `) when an entry follows it.
fn skip_thread_id(text: &str) -> &str {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let after = text[digits..].trim_start();
    if digits > 0
        && digits < text.len()
        && text.as_bytes()[digits].is_ascii_whitespace()
        && after.starts_with('"')
    {
        after
    } else {
        text
    }
}

/// Parses one entry (`<dom>:<name>:none:…`) with the given layout.
fn parse_entry(entry: &str, layout: CellLayout) -> Option<RangeEntry> {
    let mut rest = entry;
    for _ in 0..layout.leading {
        rest = rest.split_once(':')?.1;
    }
    let mut trailing: Vec<&str> = Vec::with_capacity(layout.trailing);
    for _ in 0..layout.trailing {
        let (head, tail) = rest.rsplit_once(':')?;
        trailing.push(tail);
        rest = head;
    }
    trailing.reverse();
    // The domain is everything up to the first `:` — `<default domain>` has no colon.
    let (domain, name) = rest.split_once(':').unwrap_or(("", rest));
    let mut name = name.to_string();
    if name.is_empty() || name == "none" {
        // A range pushed with only a message payload: the message is its name.
        let message = layout
            .message
            .and_then(|i| trailing.get(i))
            .filter(|m| !m.is_empty() && **m != "none");
        name = message.map_or_else(|| UNNAMED.to_string(), |m| m.to_string());
    }
    Some(RangeEntry {
        domain: domain.to_string(),
        name,
    })
}

/// Applies `regions.rename` (and the cut of over-long names) to every entry's name.
pub fn rename_entries(entries: &mut [RangeEntry], renames: &Renames) {
    for entry in entries {
        if let std::borrow::Cow::Owned(renamed) = renames.apply(&entry.name) {
            entry.name = renamed;
        }
    }
}

/// Parses a whole cell into its ranges, outermost first. Entries that do not fit the layout are kept
/// whole as names, so nothing the program named is lost.
pub fn parse_cell(cell: &str, layout: CellLayout) -> Vec<RangeEntry> {
    entries(cell)
        .into_iter()
        .filter(|e| !e.is_empty())
        .filter(|e| !e.chars().all(|c| c.is_ascii_digit()))
        .map(|e| {
            parse_entry(e, layout).unwrap_or_else(|| RangeEntry {
                domain: String::new(),
                name: e.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PUSH_POP: &str =
        "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg";

    fn layout() -> CellLayout {
        CellLayout::from_header(PUSH_POP, "Push/Pop_Range").unwrap()
    }

    fn names(cell: &str, layout: CellLayout) -> Vec<String> {
        parse_cell(cell, layout)
            .iter()
            .map(RangeEntry::segment)
            .collect()
    }

    #[test]
    fn layout_of_current_headers() {
        assert_eq!(
            layout(),
            CellLayout {
                leading: 0,
                trailing: 6,
                message: Some(5)
            }
        );
        let se = CellLayout::from_header(
            "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg",
            "Start/Stop_Range",
        )
        .unwrap();
        assert_eq!(se.leading, 1);
    }

    #[test]
    fn real_cells_from_h100_exports() {
        let one = r#"1606  "<default domain>:decode:none:none:none:none:none:none" "#;
        assert_eq!(names(one, layout()), ["decode"]);
        let nested = r#"1955  "<default domain>:LLM@prefill:none:none:none:none:none:none"  "<default domain>:attn:none:none:none:none:none:none" "#;
        // A default-domain name holding `@` is escaped: it is not range `prefill` of domain `LLM`.
        assert_eq!(names(nested, layout()), [r"LLM\@prefill", "attn"]);
        assert!(names("", layout()).is_empty());
    }

    #[test]
    fn a_default_domain_name_with_at_never_merges_with_a_domains_range() {
        let default = path_segment(DEFAULT_DOMAIN, "a@x");
        let domain = path_segment("a", "x");
        assert_eq!(default, r"a\@x");
        assert_eq!(domain, "a@x");
        assert_ne!(default, domain);
    }

    #[test]
    fn colons_domains_and_message_only_ranges() {
        let cell = r#"7  "NCCL:step:1:none:none:none:none:none:none"  "<default domain>::none:none:none:none:ascii:hello" "#;
        assert_eq!(names(cell, layout()), ["NCCL@step:1", "hello"]);
        let unnamed = r#"7  "<default domain>::none:none:none:none:none:none" "#;
        assert_eq!(names(unnamed, layout()), [UNNAMED]);
    }

    #[test]
    fn several_threads_in_one_cell_from_a_real_emit_nvtx_capture() {
        // tests/fixtures/ncu/h100-2025.3.1-pytorch/emit_nvtx_raw.csv: a backward kernel lists the main
        // thread's `step` and then the autograd thread's own stack.
        let cell = r#"6746  "<default domain>:step:none:none:none:none:none:none" 6774  "<default domain>:autograd::engine::evaluate_function: AddmmBackward0, op_id = 165:none:none:none:none:none:none"  "<default domain>:aten::sum, op_id = 174:none:none:none:none:none:none" "#;
        assert_eq!(
            names(cell, layout()),
            [
                "step",
                "autograd::engine::evaluate_function: AddmmBackward0, op_id = 165",
                "aten::sum, op_id = 174"
            ]
        );
        // A quote inside a name still does not end the entry.
        let quoted = r#"1  "<default domain>:say "hi" 2:none:none:none:none:none:none" 3  "<default domain>:b:none:none:none:none:none:none" "#;
        assert_eq!(names(quoted, layout()), [r#"say "hi" 2"#, "b"]);
    }

    #[test]
    fn older_four_field_layout() {
        let old = CellLayout::from_header(
            "thread Domain:Push/Pop_Range:PL_Type:PL_Value",
            "Push/Pop_Range",
        )
        .unwrap();
        assert_eq!(
            names(r#"12  "<default domain>:fwd:none:none" "#, old),
            ["fwd"]
        );
        let se = CellLayout::from_header(
            "Id:Domain:Start/Stop_Range:PL_Type:PL_Value",
            "Start/Stop_Range",
        )
        .unwrap();
        assert_eq!(names("0:<default domain>:epoch:none:none", se), ["epoch"]);
    }
}

/// Region paths of one cell, one per NVTX domain.
///
/// Each domain keeps its own push/pop stack, but ncu writes all of them into one cell, one after the
/// other (seen: NCCL's `ncclCommInitRankConfig` range, domain `NCCL`, after PyTorch's default-domain
/// ranges). Reading the cell as one chain would nest NCCL's range inside the training step, so the
/// entries are grouped by domain, keeping their order within each domain.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DomainStacks {
    /// The default domain's ranges, outermost first (plain names).
    pub default: Vec<String>,
    /// Every other domain's ranges, each a path of `domain@name` segments, in order of appearance.
    pub others: Vec<Vec<String>>,
}

pub fn stacks_by_domain(entries: &[RangeEntry]) -> DomainStacks {
    let mut stacks = DomainStacks::default();
    let mut other_domains: Vec<&str> = Vec::new();
    for entry in entries {
        if entry.domain == DEFAULT_DOMAIN || entry.domain.is_empty() {
            stacks.default.push(entry.segment());
            continue;
        }
        match other_domains.iter().position(|d| *d == entry.domain) {
            Some(i) => stacks.others[i].push(entry.segment()),
            None => {
                other_domains.push(&entry.domain);
                stacks.others.push(vec![entry.segment()]);
            }
        }
    }
    stacks
}

#[cfg(test)]
mod domain_tests {
    use super::*;

    #[test]
    fn nccl_ranges_from_a_real_torchrun_capture_form_their_own_tree() {
        let layout = CellLayout::from_header(
            "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg",
            "Push/Pop_Range",
        )
        .unwrap();
        let cell = r#"680  "<default domain>:train_step:none:none:none:none:none:none"  "<default domain>:forward:none:none:none:none:none:none"  "NCCL:ncclCommInitRankConfig:none:none:none:none:none:none" "#;
        let stacks = stacks_by_domain(&parse_cell(cell, layout));
        assert_eq!(stacks.default, ["train_step", "forward"]);
        assert_eq!(
            stacks.others,
            [vec!["NCCL@ncclCommInitRankConfig".to_string()]]
        );
    }
}
