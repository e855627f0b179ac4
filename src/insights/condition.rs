//! A rule's condition: comparisons of metrics, numbers and ratios of two metrics, combined with
//! `all`/`any`/`not`. Written in YAML as one-key maps: `{ lt: [tensor_engine_active_time_percent, 0.7] }`,
//! `{ gt: [{ ratio: [spill_reload_bytes, hbm_read_bytes] }, 0.25] }`, `{ all: [ … ] }`.

use serde::Deserialize;

use super::Metrics;

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Condition {
    Lt([Operand; 2]),
    Le([Operand; 2]),
    Gt([Operand; 2]),
    Ge([Operand; 2]),
    All(Vec<Condition>),
    Any(Vec<Condition>),
    Not(Box<Condition>),
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Operand {
    Number(f64),
    Metric(String),
    Ratio { ratio: [String; 2] },
}

impl Operand {
    fn value(&self, m: &Metrics) -> Option<f64> {
        match self {
            Operand::Number(x) => Some(*x),
            Operand::Metric(name) => m.get(name).copied().flatten(),
            Operand::Ratio { ratio: [a, b] } => {
                let (a, b) = (m.get(a).copied().flatten()?, m.get(b).copied().flatten()?);
                (b != 0.0).then_some(a / b)
            }
        }
    }

    fn metrics(&self) -> Vec<&str> {
        match self {
            Operand::Number(_) => Vec::new(),
            Operand::Metric(n) => vec![n.as_str()],
            Operand::Ratio { ratio: [a, b] } => vec![a.as_str(), b.as_str()],
        }
    }
}

impl Condition {
    /// `None` when a metric it needs is unknown: an unknown value is no evidence either way.
    pub fn eval(&self, m: &Metrics) -> Option<bool> {
        let cmp =
            |[a, b]: &[Operand; 2], f: fn(f64, f64) -> bool| Some(f(a.value(m)?, b.value(m)?));
        match self {
            Condition::Lt(ops) => cmp(ops, |a, b| a < b),
            Condition::Le(ops) => cmp(ops, |a, b| a <= b),
            Condition::Gt(ops) => cmp(ops, |a, b| a > b),
            Condition::Ge(ops) => cmp(ops, |a, b| a >= b),
            Condition::All(cs) => {
                let mut all = true;
                for c in cs {
                    all &= c.eval(m)?;
                }
                Some(all)
            }
            Condition::Any(cs) => {
                let vals: Vec<Option<bool>> = cs.iter().map(|c| c.eval(m)).collect();
                if vals.contains(&Some(true)) {
                    Some(true)
                } else if vals.iter().all(Option::is_some) {
                    Some(false)
                } else {
                    None
                }
            }
            Condition::Not(c) => c.eval(m).map(|v| !v),
        }
    }

    /// Every metric named, in order of appearance, without repeats.
    pub fn metrics(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out
    }

    fn collect<'a>(&'a self, out: &mut Vec<&'a str>) {
        let mut push = |names: Vec<&'a str>| {
            for n in names {
                if !out.contains(&n) {
                    out.push(n);
                }
            }
        };
        match self {
            Condition::Lt(ops) | Condition::Le(ops) | Condition::Gt(ops) | Condition::Ge(ops) => {
                push(ops[0].metrics());
                push(ops[1].metrics());
            }
            Condition::All(cs) | Condition::Any(cs) => {
                for c in cs {
                    c.collect(out);
                }
            }
            Condition::Not(c) => c.collect(out),
        }
    }
}
