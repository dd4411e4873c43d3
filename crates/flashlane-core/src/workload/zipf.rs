//! A Zipf sampler over ranks 1..=n with P(k) proportional to k^-theta, in O(1) expected time
//! per sample and O(1) memory, by rejection-inversion (Hörmann and Derflinger, "Rejection-
//! inversion to generate variates from monotone discrete distributions", ACM TOMACS 1996).
//!
//! Idea: the continuous hat h(x) = x^-theta on [0.5, n + 0.5] dominates the probabilities,
//! except for rank 1, whose mass h(1) is placed on [h_x1, H(1.5)] of the integral scale. A
//! uniform point of the hat's integral is inverted to x and rounded to rank k; it is kept
//! when it fell under the step of height h(k) around k. Acceptance is high (> 0.9 for every
//! theta), so the loop is short.

/// Zipf distribution over ranks `1..=n` with exponent `theta > 0`.
#[derive(Debug, Clone, PartialEq)]
pub struct Zipf {
    n: u64,
    theta: f64,
    /// H(1.5) - h(1): lower end of the integral range (rank 1's extra mass).
    h_integral_x1: f64,
    /// H(n + 0.5): upper end of the integral range.
    h_integral_n: f64,
    /// Squeeze: a point within this distance left of its rank is always accepted.
    squeeze: f64,
}

impl Zipf {
    /// `n >= 1` ranks, exponent `theta` finite and > 0 (checked by the caller's validation;
    /// out-of-range values give `None`).
    pub fn new(n: u64, theta: f64) -> Option<Zipf> {
        if n == 0 || !(theta.is_finite() && theta > 0.0) {
            return None;
        }
        let mut z = Zipf {
            n,
            theta,
            h_integral_x1: 0.0,
            h_integral_n: 0.0,
            squeeze: 0.0,
        };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(n as f64 + 0.5);
        z.squeeze = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        Some(z)
    }

    pub fn n(&self) -> u64 {
        self.n
    }

    /// One rank in `1..=n`. `uniform` must return independent values in [0, 1).
    pub fn sample(&self, uniform: &mut impl FnMut() -> f64) -> u64 {
        loop {
            let u = self.h_integral_n + uniform() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inverse(u);
            // Round to the nearest rank; clamp guards rounding at both ends.
            let k = (x + 0.5).floor().clamp(1.0, self.n as f64);
            if k - x <= self.squeeze || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }

    /// h(x) = x^-theta.
    fn h(&self, x: f64) -> f64 {
        (-self.theta * x.ln()).exp()
    }

    /// H(x) = integral of h from 1 to x = (x^(1-theta) - 1) / (1 - theta), or ln x at
    /// theta = 1; written so it stays accurate near theta = 1.
    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        expm1_over_x((1.0 - self.theta) * log_x) * log_x
    }

    /// Inverse of H.
    fn h_integral_inverse(&self, y: f64) -> f64 {
        // Below -1 the logarithm is undefined; only rounding can get there.
        let t = (y * (1.0 - self.theta)).max(-1.0);
        (log1p_over_x(t) * y).exp()
    }
}

/// ln(1 + x) / x, continuous at 0.
fn log1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x / 3.0)
    }
}

/// (e^x - 1) / x, continuous at 0.
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * (0.5 + x / 6.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact probabilities for small n, by a fixed-sequence quasi-uniform sweep (no RNG):
    /// the sampler must be a correct inversion, so a fine uniform grid reproduces the pmf.
    #[test]
    fn matches_exact_pmf_on_a_grid() {
        for theta in [0.5, 0.99, 1.0, 1.5, 3.0] {
            let n = 12u64;
            let z = Zipf::new(n, theta).unwrap();
            let norm: f64 = (1..=n).map(|k| (k as f64).powf(-theta)).sum();
            let mut counts = vec![0u64; n as usize + 1];
            let steps = 400_000u64;
            let mut i = 0u64;
            let mut grid = || {
                // Golden-ratio sequence: evenly spread over [0, 1).
                i += 1;
                (i as f64 * 0.618_033_988_749_894_9).fract()
            };
            for _ in 0..steps {
                counts[z.sample(&mut grid) as usize] += 1;
            }
            for k in 1..=n {
                let want = (k as f64).powf(-theta) / norm;
                let got = counts[k as usize] as f64 / steps as f64;
                assert!(
                    (got - want).abs() < 0.01 * want.max(0.01),
                    "theta {theta} rank {k}: got {got}, want {want}"
                );
            }
        }
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(Zipf::new(0, 1.0).is_none());
        assert!(Zipf::new(10, 0.0).is_none());
        assert!(Zipf::new(10, f64::NAN).is_none());
        assert_eq!(Zipf::new(1, 2.0).unwrap().sample(&mut || 0.3), 1);
    }
}
