//! How a result's deep metrics were obtained in a sampled run (measured on that launch, taken from a
//! twin launch, not at all, or left out on purpose), and the time each way accounts for in a group
//! of results.

/// Where a result's deep metrics come from. A run that profiled every result fully measures them all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Coverage {
    /// Collected on this very launch.
    #[default]
    Measured,
    /// Copied from the deep result of another launch with the same launch key.
    Estimated,
    /// No deep result has this launch's key: the result has its time and no deep metrics.
    Unmatched,
    /// Its key was left out of the deep samples on purpose (too small a share of its regions' time
    /// to matter): the result has its time and no deep metrics, never estimated ones.
    NotMeasured,
}

/// Time (in the time metric's unit) and result counts per [`Coverage`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CoverageTimes {
    pub time: [f64; 4],
    pub count: [u64; 4],
}

impl CoverageTimes {
    pub fn add(&mut self, coverage: Coverage, time: Option<f64>) {
        let at = coverage as usize;
        self.time[at] += time.unwrap_or(0.0);
        self.count[at] += 1;
    }

    pub fn merge(&mut self, other: &CoverageTimes) {
        for at in 0..4 {
            self.time[at] += other.time[at];
            self.count[at] += other.count[at];
        }
    }

    /// The share of each kind, in [`Coverage`] order: by time, or by count where no result has a
    /// time. `None` for an empty group.
    pub fn shares(&self) -> Option<[f64; 4]> {
        let total_time: f64 = self.time.iter().sum();
        let total_count: u64 = self.count.iter().sum();
        if total_time > 0.0 {
            Some(self.time.map(|t| t / total_time))
        } else if total_count > 0 {
            Some(self.count.map(|c| c as f64 / total_count as f64))
        } else {
            None
        }
    }

    /// Whether every result was measured on its own launch.
    pub fn all_measured(&self) -> bool {
        self.count[1..].iter().all(|n| *n == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_follow_time_and_fall_back_to_counts() {
        let mut c = CoverageTimes::default();
        c.add(Coverage::Measured, Some(30.0));
        c.add(Coverage::Estimated, Some(60.0));
        c.add(Coverage::Unmatched, Some(10.0));
        assert_eq!(c.shares(), Some([0.3, 0.6, 0.1, 0.0]));
        assert!(!c.all_measured());

        let mut untimed = CoverageTimes::default();
        untimed.add(Coverage::Measured, None);
        untimed.add(Coverage::Estimated, None);
        assert_eq!(untimed.shares(), Some([0.5, 0.5, 0.0, 0.0]));
        assert_eq!(CoverageTimes::default().shares(), None);

        let mut merged = CoverageTimes::default();
        merged.merge(&c);
        merged.merge(&untimed);
        assert_eq!(merged.count, [2, 2, 1, 0]);

        let mut left_out = CoverageTimes::default();
        left_out.add(Coverage::Measured, Some(75.0));
        left_out.add(Coverage::NotMeasured, Some(25.0));
        assert_eq!(left_out.shares(), Some([0.75, 0.0, 0.0, 0.25]));
        assert!(!left_out.all_measured(), "time left out is not measured");
    }
}
