//! The running count, mean and spread of a series of numbers (a launch key's durations): added one by
//! one with Welford's update and merged exactly with Chan's, which stay accurate where a plain sum of
//! squares cancels (ten thousand durations of 10⁵ ns that vary by 1%).

/// Count, mean and sum of squared deviations from the mean.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Moments {
    count: u64,
    mean: f64,
    squared_deviations: f64,
}

impl Moments {
    pub fn add(&mut self, x: f64) {
        self.count += 1;
        let delta = x - self.mean;
        self.mean += delta / self.count as f64;
        self.squared_deviations += delta * (x - self.mean);
    }

    pub fn merge(&mut self, other: &Moments) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *other;
            return;
        }
        let (n, m) = (self.count as f64, other.count as f64);
        let delta = other.mean - self.mean;
        let count = self.count + other.count;
        self.mean += delta * m / count as f64;
        self.squared_deviations += other.squared_deviations + delta * delta * n * m / count as f64;
        self.count = count;
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// The sum of the numbers.
    pub fn total(&self) -> f64 {
        self.mean * self.count as f64
    }

    /// The sample standard deviation, from two numbers on.
    pub fn sd(&self) -> Option<f64> {
        (self.count > 1).then(|| {
            (self.squared_deviations / (self.count - 1) as f64)
                .max(0.0)
                .sqrt()
        })
    }

    /// The coefficient of variation: the sample standard deviation over the mean; 0 for fewer than
    /// two numbers (nothing varies) or a mean that is not positive.
    pub fn cv(&self) -> f64 {
        match self.sd() {
            Some(sd) if self.mean > 0.0 => sd / self.mean,
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_or_merged_the_moments_are_the_same() {
        let xs = [90.0, 100.0, 110.0, 100.0, 1e5, 1e5 + 1.0];
        let mut all = Moments::default();
        xs.iter().for_each(|x| all.add(*x));
        let (mut left, mut right) = (Moments::default(), Moments::default());
        xs[..2].iter().for_each(|x| left.add(*x));
        xs[2..].iter().for_each(|x| right.add(*x));
        left.merge(&right);
        assert_eq!(left.count(), 6);
        assert!((left.mean() - all.mean()).abs() < 1e-9);
        assert!((left.cv() - all.cv()).abs() < 1e-12);
        assert!((left.total() - xs.iter().sum::<f64>()).abs() < 1e-6);
    }

    #[test]
    fn cv_is_the_sample_spread_over_the_mean_and_exact_for_large_values() {
        let mut m = Moments::default();
        [90.0, 100.0, 110.0].iter().for_each(|x| m.add(*x));
        assert!((m.cv() - 0.1).abs() < 1e-12);
        // 10,000 durations of 1e5 ns alternating ±1%: cv 0.01, which a sum of squares loses.
        let mut big = Moments::default();
        (0..10_000).for_each(|i| big.add(if i % 2 == 0 { 99_000.0 } else { 101_000.0 }));
        assert!((big.cv() - 0.01).abs() < 1e-6);
        let mut once = Moments::default();
        once.add(5.0);
        assert_eq!(once.cv(), 0.0);
        assert_eq!(Moments::default().cv(), 0.0);
    }
}
