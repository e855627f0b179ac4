//! User templates for report.md (the same context and filters as the built-in one, errors naming the
//! template and line) and whole-file writes.

use profile_run::report::render::json::to_json;
use profile_run::report::render::markdown::render;
use profile_run::report::render::RenderOptions;
use profile_run::report::write::write_atomic;
use profile_run::report::RenderError;

use crate::report_render::two_scopes;

#[test]
fn user_template_renders_with_the_same_context_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.md.j2");
    std::fs::write(
        &path,
        "{% for s in scopes %}{% for r in s.shown_regions %}{{ r.path | md }} {{ r.time | fmt_value }} {{ r.time_share | pct }}\n{% endfor %}{% endfor %}",
    )
    .unwrap();
    let options = RenderOptions {
        template: Some(path),
        ..RenderOptions::default()
    };
    let text = render(&two_scopes(false), &options).unwrap();
    assert!(text.starts_with("train\\_step 8.00 ms 80.0%\n"), "{text}");
}

#[test]
fn template_errors_name_the_template_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.md.j2");
    std::fs::write(&path, "# title\n\n{{ report.no_such_field }}\n").unwrap();
    let options = RenderOptions {
        template: Some(path.clone()),
        ..RenderOptions::default()
    };
    match render(&two_scopes(false), &options) {
        Err(RenderError::Template { name, message }) => {
            assert_eq!(name, path.display().to_string());
            assert!(message.starts_with("line 3: undefined value"), "{message}");
        }
        other => panic!("expected a template error, got {other:?}"),
    }
    std::fs::write(&path, "{% for x in %}\n").unwrap();
    let err = render(&two_scopes(false), &options).unwrap_err();
    assert!(err.to_string().contains("line 1: syntax error"), "{err}");
    let missing = RenderOptions {
        template: Some(dir.path().join("nope.md.j2")),
        ..RenderOptions::default()
    };
    assert!(matches!(
        render(&two_scopes(false), &missing),
        Err(RenderError::TemplateRead { .. })
    ));
}

#[test]
fn rendered_files_are_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.json");
    let text = to_json(&two_scopes(true));
    write_atomic(&path, text.as_bytes()).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}
