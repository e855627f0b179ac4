//! Rule results: each rule ncu applied to a result, with the messages it produced and their estimated
//! speedups (the details page's `Rule Name`, `Rule Type`, `Rule Description`, `Estimated Speedup …`).
//! Tables, charts, focus metrics and source markers in a rule's body are skipped.

use super::wire::{Cursor, WireError};

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct RuleResult {
    /// The rule's identifier (`SOLBottleneck`), the details page's `Rule Name`.
    pub identifier: String,
    pub display_name: String,
    /// The section the rule belongs to (`SpeedOfLight`).
    pub section: Option<String>,
    /// The rule's messages in order; a rule that found nothing to say has none.
    pub messages: Vec<RuleMessage>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RuleMessage {
    /// The text as stored, with ncu's link markup (`@section:ID:Label@`, `@url:Label:URL@`);
    /// [`RuleMessage::plain_text`] renders it the way the details page prints it.
    pub text: String,
    pub severity: RuleResultSeverity,
    /// The message's short title (`Small Grid`), when the rule gave one.
    pub title: Option<String>,
    /// The estimated speedup given in the same body item, if any.
    pub speedup: Option<Speedup>,
}

impl RuleMessage {
    /// The text with links rendered as plain text: a section link becomes its label, a URL link
    /// `Label (URL)`, as in ncu's details page.
    pub fn plain_text(&self) -> String {
        render_links(&self.text)
    }
}

fn render_links(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('@') {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 1..];
        let link = ["section:", "url:"].iter().find_map(|kind| {
            let body = tail.strip_prefix(kind)?;
            let end = body.find('@')?;
            let (first, second) = body[..end].split_once(':')?;
            let shown = if *kind == "section:" {
                second.to_owned()
            } else {
                format!("{first} ({second})")
            };
            Some((shown, kind.len() + end + 1))
        });
        match link {
            Some((shown, used)) => {
                out.push_str(&shown);
                rest = &tail[used..];
            }
            None => {
                out.push('@');
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A message's type; `csv_label` is how the details page prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleResultSeverity {
    None,
    Ok,
    Warning,
    Error,
    Optimization,
}

impl RuleResultSeverity {
    fn from_wire(v: u64) -> RuleResultSeverity {
        match v {
            1 => RuleResultSeverity::Ok,
            2 => RuleResultSeverity::Warning,
            3 => RuleResultSeverity::Error,
            4 => RuleResultSeverity::Optimization,
            _ => RuleResultSeverity::None,
        }
    }

    /// The details page's `Rule Type` cell (ncu prints an `Ok` message as `INF`).
    pub fn csv_label(self) -> &'static str {
        match self {
            RuleResultSeverity::None => "",
            RuleResultSeverity::Ok => "INF",
            RuleResultSeverity::Warning => "WRN",
            RuleResultSeverity::Error => "ERR",
            RuleResultSeverity::Optimization => "OPT",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Speedup {
    pub kind: SpeedupKind,
    /// Percent of the result's duration the fix could save.
    pub value: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SpeedupKind {
    Unknown,
    /// The speedup of the part of the kernel the rule looks at.
    Local,
    /// The speedup of the whole kernel.
    Global,
}

impl SpeedupKind {
    /// The details page's `Estimated Speedup Type` cell.
    pub fn csv_label(self) -> &'static str {
        match self {
            SpeedupKind::Unknown => "",
            SpeedupKind::Local => "local",
            SpeedupKind::Global => "global",
        }
    }
}

pub(crate) fn decode(msg: Cursor<'_>) -> Result<RuleResult, WireError> {
    let mut r = RuleResult::default();
    msg.for_each(|f| {
        match f.number {
            1 => r.identifier = f.as_str()?.to_owned(),
            2 => r.display_name = f.as_str()?.to_owned(),
            3 => f.as_message()?.for_each(|item| {
                if item.number == 1 {
                    if let Some(m) = decode_item(item.as_message()?)? {
                        r.messages.push(m);
                    }
                }
                Ok(())
            })?,
            4 => r.section = Some(f.as_str()?.to_owned()),
            _ => {}
        }
        Ok(())
    })?;
    Ok(r)
}

/// One body item; only items with a message count (tables and charts alone are skipped).
fn decode_item(msg: Cursor<'_>) -> Result<Option<RuleMessage>, WireError> {
    let mut message = None;
    let mut speedup = None;
    msg.for_each(|f| {
        match f.number {
            1 => message = Some(decode_message(f.as_message()?)?),
            10 => speedup = Some(decode_speedup(f.as_message()?)?),
            _ => {}
        }
        Ok(())
    })?;
    Ok(message.map(|(text, severity, title)| RuleMessage {
        text,
        severity,
        title,
        speedup,
    }))
}

fn decode_message(
    msg: Cursor<'_>,
) -> Result<(String, RuleResultSeverity, Option<String>), WireError> {
    let (mut text, mut severity, mut title) = (String::new(), RuleResultSeverity::None, None);
    msg.for_each(|f| {
        match f.number {
            1 => text = f.as_str()?.to_owned(),
            2 => severity = RuleResultSeverity::from_wire(f.as_u64()?),
            4 => title = Some(f.as_str()?.to_owned()),
            _ => {}
        }
        Ok(())
    })?;
    Ok((text, severity, title))
}

fn decode_speedup(msg: Cursor<'_>) -> Result<Speedup, WireError> {
    let mut s = Speedup {
        kind: SpeedupKind::Unknown,
        value: 0.0,
    };
    msg.for_each(|f| {
        match f.number {
            1 => {
                s.kind = match f.as_u64()? {
                    1 => SpeedupKind::Local,
                    2 => SpeedupKind::Global,
                    _ => SpeedupKind::Unknown,
                }
            }
            2 => s.value = f.as_f64()?,
            _ => {}
        }
        Ok(())
    })?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::render_links;

    #[test]
    fn links_render_as_the_details_page_prints_them() {
        assert_eq!(
            render_links("Look at @section:LaunchStats:Launch Statistics@ now."),
            "Look at Launch Statistics now."
        );
        assert_eq!(
            render_links("See the @url:Model:https://x.org/a#b@ text"),
            "See the Model (https://x.org/a#b) text"
        );
        assert_eq!(render_links("a @ b @c"), "a @ b @c");
        assert_eq!(render_links("@section:broken"), "@section:broken");
    }
}
