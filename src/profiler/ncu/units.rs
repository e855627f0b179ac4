//! Unit normalisation: ncu scales units for humans (`us`, `Mbyte`, `Ghz`) unless exported with
//! `--print-units base`; the report always carries base units, so scaled values are converted back.
//! The base names are the ones ncu 2025.3.1 prints with `--print-units base` (seen on an H200): `ns`,
//! `byte`, `hz`, `byte/block`, `cycle`, `%`.

/// A unit and the factor that turns a value in it into the base unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Normalized {
    pub unit: String,
    pub factor: f64,
}

const TIME: &[(&str, f64)] = &[
    ("nsecond", 1.0),
    ("ns", 1.0),
    ("usecond", 1e3),
    ("us", 1e3),
    ("msecond", 1e6),
    ("ms", 1e6),
    ("second", 1e9),
    ("s", 1e9),
];
const BYTES: &[(&str, f64)] = &[
    ("byte", 1.0),
    ("Kbyte", 1e3),
    ("Mbyte", 1e6),
    ("Gbyte", 1e9),
    ("Tbyte", 1e12),
    ("Pbyte", 1e15),
];
const FREQUENCY: &[(&str, f64)] = &[
    ("hz", 1.0),
    ("Hz", 1.0),
    ("Khz", 1e3),
    ("KHz", 1e3),
    ("Mhz", 1e6),
    ("MHz", 1e6),
    ("Ghz", 1e9),
    ("GHz", 1e9),
];

fn lookup(part: &str) -> Option<(&'static str, f64)> {
    for (table, base) in [(TIME, "ns"), (BYTES, "byte"), (FREQUENCY, "hz")] {
        if let Some((_, f)) = table.iter().find(|(u, _)| *u == part) {
            return Some((base, *f));
        }
    }
    None
}

/// `us` → (`ns`, 1000); `Kbyte/block` → (`byte/block`, 1000); `Gbyte/second` → (`byte/second`,
/// 1e9); unknown units (`cycle`, `%`, `warp`) come back unchanged with factor 1.
pub fn normalize(unit: &str) -> Normalized {
    let unit = unit.trim();
    let (numerator, rest) = match unit.split_once('/') {
        Some((n, d)) => (n, Some(d)),
        None => (unit, None),
    };
    let Some((base, factor)) = lookup(numerator) else {
        return Normalized {
            unit: unit.to_string(),
            factor: 1.0,
        };
    };
    // A time denominator (`byte/usecond`) divides: 1 byte/usecond = 1e-3 byte/nsecond.
    let (denominator, denom_factor) = match rest {
        Some(d) => match TIME.iter().find(|(u, _)| *u == d) {
            Some((_, f)) => ("ns".to_string(), *f),
            None => (d.to_string(), 1.0),
        },
        None => (String::new(), 1.0),
    };
    let unit = if rest.is_some() {
        format!("{base}/{denominator}")
    } else {
        base.to_string()
    };
    Normalized {
        unit,
        factor: factor / denom_factor,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaled_units_from_real_exports_become_base_units() {
        assert_eq!(
            normalize("us"),
            Normalized {
                unit: "ns".into(),
                factor: 1e3
            }
        );
        assert_eq!(
            normalize("Mbyte"),
            Normalized {
                unit: "byte".into(),
                factor: 1e6
            }
        );
        assert_eq!(
            normalize("Ghz"),
            Normalized {
                unit: "hz".into(),
                factor: 1e9
            }
        );
        assert_eq!(
            normalize("Kbyte/block"),
            Normalized {
                unit: "byte/block".into(),
                factor: 1e3
            }
        );
    }

    #[test]
    fn base_and_unknown_units_are_unchanged() {
        for unit in ["ns", "nsecond", "cycle", "%", "register/thread", "", "byte"] {
            assert_eq!(normalize(unit).factor, 1.0, "{unit}");
        }
        assert_eq!(normalize("cycle").unit, "cycle");
    }
}
