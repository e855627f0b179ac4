//! report.json against docs/report.schema.json, what templates see of the model, and rendering
//! limits and threads, over the reports built in [`crate::report_render`].

use profile_run::report::render::json::to_json;
use profile_run::report::render::markdown::render;
use profile_run::report::render::RenderOptions;

use crate::report_render::{
    assert_tables_well_formed, hostile_report, kernel, report, scope, two_scopes,
};

pub(crate) fn schema() -> (boon::Schemas, boon::SchemaIndex) {
    let path = crate::common::repo().join("docs/report.schema.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    let url = "file:///report.schema.json";
    compiler.add_resource(url, value).unwrap();
    let index = compiler
        .compile(url, &mut schemas)
        .unwrap_or_else(|e| panic!("{e:#}"));
    (schemas, index)
}

#[test]
fn report_json_matches_the_published_schema() {
    let (schemas, index) = schema();
    let mut without_time = two_scopes(false);
    without_time.time_metric = None;
    for region in &mut without_time.scopes[0].regions {
        region.time_share = None;
    }
    without_time.scopes[1].process_id = None;
    for report in [two_scopes(true), without_time, hostile_report()] {
        let value: serde_json::Value = serde_json::from_str(&to_json(&report)).unwrap();
        if let Err(e) = schemas.validate(&value, index) {
            panic!("report.json does not match docs/report.schema.json:\n{e:#}");
        }
    }
}

#[test]
fn the_schema_rejects_what_the_model_never_emits() {
    let (schemas, index) = schema();
    let mut value: serde_json::Value = serde_json::from_str(&to_json(&two_scopes(true))).unwrap();
    value["scopes"][0]["regions"][0]["kind"] = "nested".into();
    assert!(schemas.validate(&value, index).is_err());
    let mut value: serde_json::Value = serde_json::from_str(&to_json(&two_scopes(true))).unwrap();
    value["scopes"][0]["unexpected"] = 1.into();
    assert!(schemas.validate(&value, index).is_err());
}

#[test]
fn zero_limits_still_say_what_was_left_out() {
    let options = RenderOptions {
        template: None,
        max_regions: 0,
        max_kernels: 0,
        threads: 1,
        charts: false,
    };
    let text = render(&two_scopes(false), &options).unwrap();
    assert!(text.contains("… 5 more regions not shown"), "{text}");
    assert!(
        !text.contains("### train"),
        "no region sections without shown regions"
    );
    assert_tables_well_formed(&text);

    let baseline = report(
        vec![scope(
            "p",
            1,
            Vec::new(),
            vec![kernel("memset", "memset", 1, 10.0)],
        )],
        false,
    );
    let text = render(&baseline, &options).unwrap();
    assert!(text.contains("… 1 more kernel functions"), "{text}");
    assert!(!text.contains("No kernels."));
}

/// Keys of a JSON object.
fn keys(value: &serde_json::Value) -> Vec<String> {
    value.as_object().unwrap().keys().cloned().collect()
}

/// The template views leave out only the bulk (every region, every kernel) and keep every other
/// field of the model, so a field added to the model must be added to the views too.
/// `report.scopes` holds the same views as `scopes`.
#[test]
fn templates_see_every_model_field_but_the_unbounded_lists() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keys.md.j2");
    std::fs::write(
        &path,
        // `trim_blocks` drops a line break after a block tag, hence the `;` line ends.
        "{% set s = report.scopes[0] %}\
         report:{% for k in report %} {{ k }}{% endfor %};\
         scope:{% for k in s %} {{ k }}{% endfor %};\
         total:{% for k in s.total %} {{ k }}{% endfor %};\
         region:{% for k in s.shown_regions[0] %} {{ k }}{% endfor %};\
         hidden: {{ s.hidden_regions }} of {{ s.region_count }};\
         same: {{ s.anchor == scopes[0].anchor and report.aggregate.anchor == aggregate.anchor }}\n",
    )
    .unwrap();
    let options = RenderOptions {
        template: Some(path),
        max_regions: 1,
        max_kernels: 0,
        threads: 4,
        charts: false,
    };
    let report = two_scopes(true);
    let text = render(&report, &options).unwrap();
    let line = |name: &str| -> Vec<String> {
        let prefix = format!("{name}:");
        let line = text.split(';').find(|l| l.starts_with(&prefix)).unwrap();
        line[prefix.len()..]
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    let json: serde_json::Value = serde_json::from_str(&to_json(&report)).unwrap();
    let expect = |value: &serde_json::Value, left_out: &[&str], seen: &[String]| {
        for key in keys(value) {
            if left_out.contains(&key.as_str()) {
                assert!(!seen.contains(&key), "{key} is in the view");
            } else {
                assert!(seen.contains(&key), "{key} missing from the view: {seen:?}");
            }
        }
    };
    expect(&json, &[], &line("report"));
    let scope = &json["scopes"][0];
    expect(scope, &["regions"], &line("scope"));
    expect(&scope["total"], &["kernels"], &line("total"));
    expect(&scope["regions"][0], &["kernels"], &line("region"));
    assert!(text.contains("hidden: 4 of 5;same: True"), "{text}");
}

#[test]
fn scope_sections_rendered_on_several_threads_give_the_same_text() {
    for aggregate in [true, false] {
        let report = two_scopes(aggregate);
        let one = render(&report, &RenderOptions::default()).unwrap();
        for threads in [2, 3, 8] {
            let options = RenderOptions {
                threads,
                ..RenderOptions::default()
            };
            assert_eq!(render(&report, &options).unwrap(), one, "{threads} threads");
        }
    }
}
