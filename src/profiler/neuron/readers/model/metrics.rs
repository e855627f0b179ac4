//! A summary's metrics: name → value (`None` where the tool wrote `null`), a list sorted by name.
//! A profile may hold 200,000 summaries of some 30 metrics each: a list of (shared name, value) costs
//! 32 bytes a metric where a tree map's nodes cost over a hundred (docs/reliability.md, "Neuron
//! profiles").

use std::sync::Arc;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

/// Metric name → value, in name order; names are shared with every other summary's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SummaryMetrics(Vec<(Arc<str>, Option<f64>)>);

impl SummaryMetrics {
    fn find(&self, name: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(n, _)| (**n).cmp(name))
    }

    /// The value under `name`: `Some(&None)` where the tool wrote `null`, `None` where it wrote nothing.
    pub fn get(&self, name: &str) -> Option<&Option<f64>> {
        self.find(name).ok().map(|i| &self.0[i].1)
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.find(name).is_ok()
    }

    /// Sets `name`'s value, returning the one it replaces.
    pub fn insert(&mut self, name: Arc<str>, value: Option<f64>) -> Option<Option<f64>> {
        match self.find(&name) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                self.0.insert(i, (name, value));
                None
            }
        }
    }

    pub fn keys(&self) -> impl Iterator<Item = &Arc<str>> {
        self.0.iter().map(|(n, _)| n)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Arc<str>, &Option<f64>)> {
        self.0.iter().map(|(n, v)| (n, v))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Lets go of spare room once a summary is whole.
    pub fn shrink_to_fit(&mut self) {
        self.0.shrink_to_fit();
    }
}

impl Serialize for SummaryMetrics {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(&**name, value)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_in_name_order_and_replaced_in_place() {
        let mut m = SummaryMetrics::default();
        assert_eq!(m.insert("total_time".into(), Some(2.0)), None);
        assert_eq!(m.insert("active".into(), None), None);
        assert_eq!(m.insert("total_time".into(), Some(3.0)), Some(Some(2.0)));
        assert_eq!(
            m.keys().map(|k| &**k).collect::<Vec<_>>(),
            ["active", "total_time"]
        );
        assert_eq!(m.get("total_time"), Some(&Some(3.0)));
        assert_eq!(m.get("active"), Some(&None));
        assert_eq!(m.get("other"), None);
        assert!(m.contains_key("active") && !m.contains_key("other"));
        assert_eq!(m.len(), 2);
    }
}
