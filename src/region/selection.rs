//! The region filter: `regions.include` / `regions.exclude` (and `regions.domain`) read once, in the
//! grammar of [`super::pattern`], and checked with errors that name the key and the fix. Every
//! profiler selects regions through it: a profiler's own filter expressions are written from its
//! parsed levels, and the requested regions, a trace's attribution and a profiler's own region list
//! use its level matchers.

use regex::Regex;
use thiserror::Error;

use super::pattern::{level_regexes, literal_text, split_levels, Piece};
use super::RequestedRegions;

/// A region pattern that cannot be used, with the key it was given under and the fix.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("`{key}`: region pattern {pattern:?} {reason}")]
pub struct RegionPatternError {
    pub key: String,
    pub pattern: String,
    pub reason: String,
}

/// How a pattern is written: the forms a profiler may translate differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatternForm {
    /// Plain names level by level, escapes resolved: exactly one region.
    Literal(Vec<String>),
    /// Levels with `*` or `?` in at least one of them.
    Glob(Vec<Vec<Piece>>),
    /// The user's own regex (`regex:…`), the body as written.
    Regex(String),
}

/// One checked pattern of `regions.include` or `regions.exclude`.
#[derive(Debug, Clone)]
pub struct RegionPattern {
    /// As the user wrote it.
    pub text: String,
    /// Where it was given: `regions.include[2]`.
    pub key: String,
    pub form: PatternForm,
    /// One anchored regex per level, matching region path segments as profile-run writes them
    /// (`domain@name` outside the default domain).
    levels: Vec<Regex>,
}

impl RegionPattern {
    fn parse(text: &str, key: String, domain: Option<&str>) -> Result<Self, RegionPatternError> {
        let invalid = |reason: String| RegionPatternError {
            key: key.clone(),
            pattern: text.to_string(),
            reason,
        };
        let form = match text.strip_prefix("regex:") {
            Some("" | "/") => {
                return Err(invalid(
                    "has nothing after `regex:`; write a regex such as `regex:dec.*`".into(),
                ))
            }
            Some(body) => PatternForm::Regex(body.to_string()),
            None => {
                let levels = split_levels(text);
                if levels.len() == 1 && levels[0].is_empty() {
                    return Err(invalid(
                        "is empty; write a range name such as `forward`".into(),
                    ));
                }
                if let Some(n) = levels.iter().position(Vec::is_empty) {
                    return Err(invalid(format!(
                        "has an empty level {} (`a//b`, a leading `/` or a lone `/`); name every \
                         level, e.g. `train_step/forward`, and write `\\/` for a `/` inside a name",
                        n + 1
                    )));
                }
                if levels.iter().flatten().all(|p| matches!(p, Piece::Lit(_))) {
                    PatternForm::Literal(levels.iter().map(|l| literal_text(l)).collect())
                } else {
                    PatternForm::Glob(levels)
                }
            }
        };
        let levels = level_regexes(text, domain).map_err(|e| {
            invalid(format!(
                "is not a valid regex: {e}; fix the regex, or write the name with `\\` before \
                 each special character"
            ))
        })?;
        Ok(RegionPattern {
            text: text.to_string(),
            key,
            form,
            levels,
        })
    }
}

/// `regions.include`, `regions.exclude` and `regions.domain`, checked once.
#[derive(Debug, Clone, Default)]
pub struct RegionFilter {
    pub include: Vec<RegionPattern>,
    pub exclude: Vec<RegionPattern>,
    /// The NVTX domain every pattern is in (`regions.domain`); `None`: the default domain.
    pub domain: Option<String>,
}

impl RegionFilter {
    /// Reads the patterns; the first one that cannot be used is the error, naming its key.
    pub fn new(
        include: &[String],
        exclude: &[String],
        domain: Option<&str>,
    ) -> Result<RegionFilter, RegionPatternError> {
        if domain == Some("") {
            return Err(RegionPatternError {
                key: "regions.domain".into(),
                pattern: String::new(),
                reason: "is empty; use `null` for the default domain".into(),
            });
        }
        let parse = |list: &[String], key: &str| {
            list.iter()
                .enumerate()
                .map(|(i, text)| RegionPattern::parse(text, format!("{key}[{i}]"), domain))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(RegionFilter {
            include: parse(include, "regions.include")?,
            exclude: parse(exclude, "regions.exclude")?,
            domain: domain.map(str::to_string),
        })
    }

    /// True when no pattern is given: every region is wanted.
    pub fn is_empty(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty()
    }

    /// The include patterns as the analysis spine's requested regions.
    pub fn requested(&self) -> RequestedRegions {
        RequestedRegions::new(self.include.iter().map(|p| p.levels.clone()).collect())
    }

    /// The exclude patterns, read the way include patterns are.
    pub fn excluded(&self) -> RequestedRegions {
        RequestedRegions::new(self.exclude.iter().map(|p| p.levels.clone()).collect())
    }

    /// The include patterns that name exactly one region, with that region's path segments (in
    /// `regions.domain`, as profile-run writes them), so a region asked for that saw no result can
    /// still show.
    pub fn requested_paths(&self) -> Vec<(String, Vec<String>)> {
        self.include
            .iter()
            .filter_map(|p| match &p.form {
                PatternForm::Literal(names) => Some((p.text.clone(), self.segments(names))),
                _ => None,
            })
            .collect()
    }

    fn segments(&self, names: &[String]) -> Vec<String> {
        names
            .iter()
            .map(|name| match &self.domain {
                Some(domain) => format!("{domain}@{name}"),
                None => name.clone(),
            })
            .collect()
    }

    /// For each region (path segments, grouped by a tree key such as a region kind), whether it
    /// stays: no include pattern or one that names it, a region nested in it or one it encloses;
    /// and no exclude pattern names it or a region it is nested in.
    pub fn keep<K: PartialEq>(&self, regions: &[(K, &[String])]) -> Vec<bool> {
        let excluded = self.excluded();
        let prefixes_excluded = |segments: &[String]| {
            (1..=segments.len()).any(|depth| excluded.names(&segments[..depth]))
        };
        self.requested()
            .keep(regions)
            .into_iter()
            .zip(regions)
            .map(|(kept, (_, segments))| kept && !prefixes_excluded(segments))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn path(text: &str) -> Vec<String> {
        text.split('/').map(str::to_string).collect()
    }

    #[test]
    fn patterns_are_read_once_into_their_forms() {
        let f = RegionFilter::new(&strings(&[r"a\/b/c", "dec*", "regex:x+"]), &[], None).unwrap();
        assert_eq!(
            f.include[0].form,
            PatternForm::Literal(strings(&["a/b", "c"]))
        );
        assert!(matches!(f.include[1].form, PatternForm::Glob(_)));
        assert_eq!(f.include[2].form, PatternForm::Regex("x+".into()));
        assert_eq!(f.include[1].key, "regions.include[1]");
        assert_eq!(
            f.requested_paths(),
            [(r"a\/b/c".to_string(), strings(&["a/b", "c"]))]
        );
    }

    #[test]
    fn bad_patterns_name_their_key_and_the_fix() {
        for (bad, fix) in [
            ("", "write a range name"),
            ("a//b", "name every level"),
            ("regex:", "write a regex"),
            ("regex:(", "fix the regex"),
        ] {
            let err = RegionFilter::new(&[], &strings(&["ok", bad]), None).unwrap_err();
            let msg = err.to_string();
            assert!(msg.starts_with("`regions.exclude[1]`"), "{msg}");
            assert!(msg.contains(fix), "{msg}");
        }
        let err = RegionFilter::new(&[], &[], Some("")).unwrap_err();
        assert_eq!(err.key, "regions.domain");
    }

    #[test]
    fn keep_holds_named_nested_and_enclosing_regions_less_the_excluded() {
        let paths: Vec<Vec<String>> = ["sg00", "sg00/_dot.3", "sg00/_dot.3/x", "sg01"]
            .iter()
            .map(|p| path(p))
            .collect();
        let regions: Vec<((), &[String])> = paths.iter().map(|p| ((), p.as_slice())).collect();
        let keep = |include: &[&str], exclude: &[&str]| {
            RegionFilter::new(&strings(include), &strings(exclude), None)
                .unwrap()
                .keep(&regions)
        };
        assert_eq!(keep(&["_dot.3"], &[]), [true, true, true, false]);
        assert_eq!(keep(&[], &["_dot.*"]), [true, false, false, true]);
        assert_eq!(keep(&[], &[]), [true; 4]);
    }
}
