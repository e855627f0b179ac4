//! The rules engine on hand-made metric maps and rule files.

use std::path::Path;

use profile_run::insights::{Metrics, RuleSet, RuleSeverity};

const VOCAB: &[&str] = &["busy", "wait", "read", "reload", "count", "size"];

fn metrics(pairs: &[(&str, Option<f64>)]) -> Metrics {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

const RULES: &str = r#"
rules:
  - id: low_busy
    severity: medium
    priority: 60
    when: { lt: [busy, 0.7] }
    message: "busy {busy:%}"
    cause: c
    action: a
  - id: reload_share
    severity: high
    when: { gt: [{ ratio: [reload, read] }, 0.25] }
    message: "reload {reload} of {read}"
    cause: c
    action: a
  - id: fragmented
    severity: medium
    priority: 70
    when: { all: [{ lt: [size, 32768] }, { gt: [count, 1000] }] }
    message: "{count} transfers"
    cause: c
    action: a
  - id: idle_or_waiting
    severity: low
    when: { any: [{ lt: [busy, 0.1] }, { gt: [wait, busy] }] }
    message: "wait {wait}"
    cause: c
    action: a
  - id: not_busy
    severity: info
    when: { not: { ge: [busy, 0.5] } }
    message: "m"
    cause: c
    action: a
"#;

fn rules() -> RuleSet {
    RuleSet::parse(Path::new("r.yaml"), RULES, VOCAB).unwrap()
}

#[test]
fn fired_rules_come_most_important_first_with_their_evidence() {
    let m = metrics(&[
        ("busy", Some(0.4)),
        ("wait", Some(0.5)),
        ("read", Some(100.0)),
        ("reload", Some(30.0)),
        ("count", Some(5000.0)),
        ("size", Some(4096.0)),
    ]);
    let got = rules().evaluate(&m, &Default::default(), 4);
    let ids: Vec<&str> = got.iter().map(|i| i.rule.as_str()).collect();
    // high first; among mediums priority 70 before 60; the low rule before info, but max is 4
    assert_eq!(
        ids,
        ["reload_share", "fragmented", "low_busy", "idle_or_waiting"]
    );
    assert_eq!(got[0].severity, RuleSeverity::High);
    assert_eq!(got[0].message, "reload 30 of 100");
    let ev: Vec<(&str, f64)> = got[0]
        .evidence
        .iter()
        .map(|e| (e.metric.as_str(), e.value))
        .collect();
    assert_eq!(ev, [("reload", 30.0), ("read", 100.0)]);
    assert_eq!(got[2].message, "busy 40.0%");
    assert_eq!(rules().evaluate(&m, &Default::default(), 2).len(), 2);
}

#[test]
fn unknown_values_fire_nothing_and_boundaries_are_strict() {
    let m = metrics(&[
        ("busy", Some(0.7)),
        ("wait", None),
        ("read", Some(0.0)),
        ("reload", Some(5.0)),
    ]);
    // busy = 0.7 is not < 0.7; ratio over a zero read is unknown; `any` with one unknown and one false is
    // unknown; not(busy >= 0.5) is false
    assert!(rules().evaluate(&m, &Default::default(), 4).is_empty());
    let m = metrics(&[("busy", Some(0.05)), ("wait", None)]);
    // `any` is true as soon as one branch is true, even with the other unknown
    let ids: Vec<String> = rules()
        .evaluate(&m, &Default::default(), 4)
        .into_iter()
        .map(|i| i.rule)
        .collect();
    assert_eq!(ids, ["low_busy", "idle_or_waiting", "not_busy"]);
}

#[test]
fn an_unknown_metric_is_a_load_error_naming_the_rule_and_file() {
    let text = RULES.replace("lt: [busy, 0.7]", "lt: [bussy, 0.7]");
    let err = RuleSet::parse(Path::new("conf/x.yaml"), &text, VOCAB)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "conf/x.yaml: rule `low_busy`: unknown metric `bussy` (did you mean `busy`?)"
    );
    let text = RULES.replace(
        "message: \"{count} transfers\"",
        "message: \"{counts} transfers\"",
    );
    let err = RuleSet::parse(Path::new("x.yaml"), &text, VOCAB)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("rule `fragmented`: unknown metric `counts`"),
        "{err}"
    );
}

#[test]
fn malformed_rule_files_name_the_line() {
    let text = "rules:\n  - id: a\n    severity: urgent\n    when: { lt: [busy, 1] }\n    message: m\n    cause: c\n    action: a\n";
    let err = RuleSet::parse(Path::new("x.yaml"), text, VOCAB)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("x.yaml: line 3") && err.contains("urgent"),
        "{err}"
    );
    let text = RULES.replace("id: fragmented", "id: low_busy");
    let err = RuleSet::parse(Path::new("x.yaml"), &text, VOCAB)
        .unwrap_err()
        .to_string();
    assert!(err.contains("rule `low_busy` is defined twice"), "{err}");
}
