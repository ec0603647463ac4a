//! Analytic steady-state write amplification: the oracle the simulator is validated against.
//!
//! Every model here assumes single-page host writes drawn uniformly over the logical space, a
//! page-mapped FTL and a number of blocks `N → ∞`. They all take
//! `alpha = T / U = 1 + OP` (physical pages over logical pages) and return
//! `A = flash page programs / host page writes`.
//!
//! **Convention.** `alpha` is *physical ÷ logical*, i.e. `1 + OP` with `OP = (T − U) / U`.
//! Desnoyers writes the same quantity as a spare factor `Sf = (T − U) / T`; convert with
//! `alpha = 1 / (1 − Sf)`. The two readings of "7 % spare" differ a lot at low spare
//! (FIFO: 7.8172 for `OP = 0.07` against 7.3177 for `Sf = 0.07`), so say which one a
//! parameter means.
//!
//! # Models
//!
//! * **FIFO / LRW** ([`wa_fifo`]): the victim is the least recently written block. Each cleaning
//!   frees `(1 − x)·b` pages, so a block reaching the tail has seen `T(1 − x)` host writes since
//!   it was written, each killing a given page with probability `1/U`; its valid fraction `x`
//!   therefore solves `x = e^{−alpha(1−x)}` and
//!   `A = 1/(1−x) = alpha / (alpha + W₀(−alpha e^{−alpha}))`, independent of the block size
//!   (Desnoyers, "Analytic modeling of SSD write performance", SYSTOR 2012; Xiang & Kurkoski,
//!   "An improved analytic expression for write amplification in NAND flash",
//!   arXiv:1110.4245).
//! * **Greedy, approximation** ([`wa_greedy_approx`]): Desnoyers' closed form
//!   `A_FIFO(k·alpha)/k` with `k = 1 + 1/(2b)`.
//! * **Greedy, exact fluid limit** ([`wa_greedy`]): blocks are written full and lose valid pages
//!   at a rate proportional to their count, so in steady state `x_i ∝ 1/i` above a cleaning
//!   threshold and the victim always holds `j` or `j − 1` valid pages (Bux & Iliadis,
//!   "Performance of greedy garbage collection in flash-based solid-state drives", Performance
//!   Evaluation 2010). With `H_n` the harmonic numbers and `c(j) = (b − j)/(H_b − H_j)`
//!   (the harmonic mean of `j+1 ..= b`), `j` is the smallest integer with `c(j) ≥ rho·b`,
//!   `y = (rho·b − c(j))/(j − c(j))` and `A = (1 − y)/(rho (H_b − H_j))`, `rho = 1/alpha`.
//! * **Random victim** ([`wa_random`]): `A = alpha/(alpha − 1)`.
//! * **d-choices** ([`wa_d_choices`]): sample `d` blocks uniformly, clean the one with the fewest
//!   valid pages. Van Houdt's mean-field model ("A mean field model for a class of garbage
//!   collection algorithms in flash-based solid state drives", SIGMETRICS 2013) tracks the
//!   fraction `x_i` of blocks with `i` valid pages; the steady state is the fixed point of
//!   `dx_i/dt = [(i+1)x_{i+1} − i x_i]/(rho b) + (1{i=b} − p_i)/(b − Σ_k k p_k)` with
//!   `p_i = (Σ_{k≥i} x_k)^d − (Σ_{k>i} x_k)^d`, and `A = b/(b − Σ_k k p_k)`. `d = 1` is the
//!   random victim, `d → ∞` tends to greedy.
//!
//! # How the d-choices fixed point is found
//!
//! Write `S_i = Σ_{k≥i} x_k` (so `S_0 = 1`, `S_{b+1} = 0`) and `λ = rho·b/(b − Σ_k k p_k)`.
//! Summing the fixed-point equations for levels `i ..= b` telescopes to
//! `i·x_i = λ (1 − S_i^d)`, i.e. `S_i − λ(1 − S_i^d)/i = S_{i+1}` for `i = 1 ..= b`. For a given
//! `λ` this fixes the whole profile: starting from `S_{b+1} = 0`, each `S_i` is the unique root
//! in `(S_{i+1}, 1)` of an increasing convex function (solved by Newton from the right).
//! The same recursion gives `Σ_{i≥1} S_i = λ(b − Σ_k k p_k)` for every `λ`, so the one remaining
//! condition is the mass constraint `Σ_i i·x_i = Σ_{i≥1} S_i = rho·b`, whose left side is
//! increasing in `λ`. It is solved by bracketed Newton on `λ` (the derivative comes from the
//! same recursion), bisecting whenever a Newton step leaves the bracket. This is exact (no time
//! stepping), converges in a handful of sweeps, and takes well under a millisecond for
//! `b = 1024`, `d = 64`. The test module cross-checks it against a direct integration of the
//! ODE.
//!
//! # Pitfall: effective over-provisioning
//!
//! These formulas count *every* physical page as available to hold data. A real FTL holds some
//! blocks back (a GC reserve of free blocks, open write frontiers that are only partly filled),
//! which lowers the spare space the cleaner actually sees. Compare a simulation with
//! `alpha_eff = (N − reserved blocks − ~½ per open block) / (U / b)` rather than the nominal
//! `1 + OP`: at `OP = 0.07` with 1024 blocks of 256 pages, 2.5 held-back blocks raise WA by
//! about 3.5 %, far more than the ~1 % agreement expected from a correct simulator. Also
//! measure only after steady state (fill once, then write several drive capacities), and use
//! thousands of blocks — these are `N → ∞` limits.
//!
//! # Domain
//!
//! All models need `alpha > 1`. `alpha == 1` (no spare at all) returns `f64::INFINITY`,
//! `alpha == +∞` returns `1.0`; `alpha < 1`, NaN, `b == 0` or `d == 0` return NaN.

/// Checks `alpha` and returns `rho = 1/alpha`, or the value to return for a degenerate `alpha`.
fn rho_of(alpha: f64) -> Result<f64, f64> {
    if alpha.is_nan() || alpha < 1.0 {
        Err(f64::NAN)
    } else if alpha == 1.0 {
        Err(f64::INFINITY)
    } else if alpha == f64::INFINITY {
        Err(1.0)
    } else {
        Ok(1.0 / alpha)
    }
}

/// Principal branch W0 of the Lambert W function for x in [-1/e, +inf). Newton/Halley iteration, accurate to ~1e-14.
///
/// Returns the `w ≥ −1` with `w·e^w = x`. Arguments below `−1/e` by more than rounding error,
/// and NaN, give NaN; `+∞` gives `+∞`. Near the branch point the series in
/// `p = sqrt(2(e·x + 1))` is used (with `e·x + 1` formed from a two-part `e` to avoid
/// cancellation); elsewhere Winitzki's approximation seeds Halley's iteration on `w e^w − x`
/// (or on `w + ln w − ln x` for large `x`, which cannot overflow).
pub fn lambert_w0(x: f64) -> f64 {
    // e = E_HI + E_LO to about 32 significant digits.
    const E_HI: f64 = std::f64::consts::E;
    const E_LO: f64 = 1.445_646_891_729_250_2e-16;
    if x.is_nan() {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return f64::INFINITY;
    }
    if x == 0.0 {
        return x;
    }
    // q = e·x + 1 ≥ 0 on the domain; it vanishes at the branch point x = −1/e.
    let q = E_HI.mul_add(x, 1.0) + E_LO * x;
    w0_with_q(x, q)
}

/// W0(x) given also `q = e·x + 1`, which a caller may know more accurately than `x` itself
/// (the value of W0 near the branch point depends on `sqrt(q)`).
fn w0_with_q(x: f64, q: f64) -> f64 {
    if q <= 0.0 {
        // Allow a few ulps of rounding in an argument meant to be exactly −1/e.
        return if q > -1e-15 { -1.0 } else { f64::NAN };
    }
    if x < -0.3 {
        let p = (2.0 * q).sqrt();
        let w = branch_series(p);
        if p < 2e-3 {
            // Truncation error below p^10/100 < 1e-28; Halley would only add rounding noise.
            return w;
        }
        return halley_exp(x, w);
    }
    // Winitzki's approximation: good to a few percent over the whole range.
    let l = x.ln_1p();
    let w = l * (1.0 - l.ln_1p() / (2.0 + l));
    if x < 20.0 {
        halley_exp(x, w)
    } else {
        halley_log(x.ln(), w)
    }
}

/// Series of W0 about the branch point in `p = sqrt(2(e·x + 1))` (Corless et al. 1996).
fn branch_series(p: f64) -> f64 {
    const C: [f64; 10] = [
        -1.0,
        1.0,
        -1.0 / 3.0,
        11.0 / 72.0,
        -43.0 / 540.0,
        769.0 / 17280.0,
        -221.0 / 8505.0,
        680_863.0 / 43_545_600.0,
        -1963.0 / 204_120.0,
        226_287_557.0 / 37_623_398_400.0,
    ];
    C.iter().rev().fold(0.0, |acc, &c| acc.mul_add(p, c))
}

/// Halley's iteration on `f(w) = w e^w − x`, for moderate `x` (no overflow risk).
fn halley_exp(x: f64, mut w: f64) -> f64 {
    for _ in 0..64 {
        let ew = w.exp();
        let f = w.mul_add(ew, -x);
        let wp1 = w + 1.0;
        if wp1 == 0.0 {
            break;
        }
        let fp = ew * wp1;
        let dw = f / (fp - (w + 2.0) * f / (2.0 * wp1));
        if !dw.is_finite() {
            break;
        }
        w -= dw;
        if dw.abs() <= 2.0 * f64::EPSILON * w.abs() {
            break;
        }
    }
    w
}

/// Halley's iteration on `f(w) = w + ln w − ln x` (for large `x`, where `w > 1`).
fn halley_log(lnx: f64, mut w: f64) -> f64 {
    for _ in 0..64 {
        let f = w + w.ln() - lnx;
        let fp = 1.0 + 1.0 / w;
        let fpp = -1.0 / (w * w);
        let dw = f / (fp - f * fpp / (2.0 * fp));
        w -= dw;
        if dw.abs() <= 2.0 * f64::EPSILON * w.abs() {
            break;
        }
    }
    w
}

/// FIFO (LRW) cleaning: A = alpha / (alpha + W0(-alpha e^{-alpha})). Independent of b.
///
/// Desnoyers (SYSTOR 2012), Xiang & Kurkoski (arXiv:1110.4245). `alpha = 1 + OP`; for a
/// spare factor `Sf` pass `1/(1 − Sf)`.
pub fn wa_fifo(alpha: f64) -> f64 {
    if let Err(v) = rho_of(alpha) {
        return v;
    }
    // For alpha > 1, −alpha e^{−alpha} lies in (−1/e, 0) and W0 of it is −alpha·x, where x is the
    // valid fraction of the victim. Near alpha = 1 the argument approaches the branch point,
    // where W0 depends on q = e·arg + 1 = 1 − alpha e^{1−alpha} ≈ (alpha − 1)²/2; forming q from
    // the rounded argument would lose all accuracy, so compute it from delta = alpha − 1.
    let delta = alpha - 1.0;
    let q = if delta <= 1.0 {
        // 1 − (1 + δ) e^{−δ} = Σ_{n≥2} (−1)^n (n − 1) δ^n / n!
        let mut term = -delta; // (−δ)^n / n!, starting at n = 1
        let mut sum = 0.0;
        for n in 2..60 {
            term *= -delta / f64::from(n);
            let add = f64::from(n - 1) * term;
            sum += add;
            if add.abs() <= 1e-17 * sum.abs() {
                break;
            }
        }
        sum
    } else {
        -(-delta).exp_m1() - delta * (-delta).exp()
    };
    let arg = -alpha * (-alpha).exp();
    alpha / (alpha + w0_with_q(arg, q))
}

/// Greedy, Desnoyers' closed-form approximation A_FIFO(k alpha)/k with k = 1 + 1/(2b).
pub fn wa_greedy_approx(alpha: f64, b: u32) -> f64 {
    if b == 0 {
        return f64::NAN;
    }
    if let Err(v) = rho_of(alpha) {
        return v;
    }
    let k = 1.0 + 1.0 / (2.0 * f64::from(b));
    wa_fifo(k * alpha) / k
}

/// Greedy, exact large-N fluid limit with harmonic numbers (see ANALYTIC.md).
///
/// `c(j) = (b − j)/(H_b − H_j)` is increasing in `j` (it is the harmonic mean of
/// `j+1 ..= b`), and the fluid steady state with the victim holding `j` or `j − 1` valid pages
/// sweeps `rho·b` over `(c(j−1), c(j)]`. Hence `j` is the **smallest** `j` with
/// `c(j) ≥ rho·b` (equivalently `c(j−1) < rho·b ≤ c(j)`); this is the reading that reproduces
/// the reference table (the "largest `j` with `c(j) ≤ rho·b`" reading gives `y < 0` and, at
/// `OP = 0.07`, `b = 64`, `A = 6.887` instead of 7.0099). Then
/// `y = (rho b − c(j))/(j − c(j))` and `A = (1 − y)/(rho (H_b − H_j))`; here
/// `1 − y = 1/(1 + u/(j (H_b − H_j)))` with `u ∈ [0, 1)` the fraction of victims that hold
/// `j − 1` valid pages.
///
/// When `rho·b ≤ c(0) = b/H_b` (spare so large that some blocks are entirely invalid when
/// cleaned) there is no such `j ≥ 1` in range of the formula: every victim is empty and
/// `A = 1`. (The `j = 1` formula extrapolated below `c(0)` would give `A < 1`.) With
/// `alpha ≤ 3` this only happens for `b ≤ 10`.
pub fn wa_greedy(alpha: f64, b: u32) -> f64 {
    if b == 0 {
        return f64::NAN;
    }
    let rho = match rho_of(alpha) {
        Ok(r) => r,
        Err(v) => return v,
    };
    let bf = f64::from(b);
    let rb = rho * bf;
    // tail[j] = H_b − H_j = Σ_{k=j+1..=b} 1/k, summed small-to-large for accuracy.
    let n = b as usize;
    let mut tail = vec![0.0f64; n + 1];
    for j in (0..n).rev() {
        tail[j] = tail[j + 1] + 1.0 / (j + 1) as f64;
    }
    let c = |j: usize| (bf - j as f64) / tail[j];
    if rb <= c(0) {
        return 1.0;
    }
    // c(b − 1) = b > rho·b, so a j always exists in 1 ..= b − 1 once rb > c(0).
    let j = (1..n).find(|&j| c(j) >= rb).unwrap_or(n - 1);
    let cj = c(j);
    let y = (rb - cj) / (j as f64 - cj);
    (1.0 - y) / (rho * tail[j])
}

/// Random victim: alpha / (alpha - 1).
pub fn wa_random(alpha: f64) -> f64 {
    match rho_of(alpha) {
        Ok(_) => alpha / (alpha - 1.0),
        Err(v) => v,
    }
}

/// d-choices (Van Houdt mean-field fixed point). d = 1 must equal wa_random; large d approaches greedy.
///
/// `d = 1` returns [`wa_random`] exactly (the mean-field fixed point agrees with it to rounding
/// error); other `d` solve the fixed point as described in the module docs.
pub fn wa_d_choices(alpha: f64, b: u32, d: u32) -> f64 {
    if b == 0 || d == 0 {
        return f64::NAN;
    }
    let rho = match rho_of(alpha) {
        Ok(r) => r,
        Err(v) => return v,
    };
    if d == 1 {
        return wa_random(alpha);
    }
    DChoicesFixedPoint::solve(rho, b, d).wa()
}

/// Which analytic model applies to a victim-policy name, returning None when none does:
/// "fifo" -> wa_fifo, "greedy" -> wa_greedy, "random" -> wa_random, "d-choices:N" -> wa_d_choices(N).
///
/// Names are the `gc.policy` spellings (surrounding whitespace is ignored); `d-choices` needs
/// `N ≥ 1`. Policies without a model (`cost-benefit`, `windowed-greedy:W`, anything unknown)
/// and parameters for which the model is undefined (`alpha < 1`, NaN, `b == 0`) give `None`.
/// `alpha == 1` gives `Some(f64::INFINITY)`.
pub fn wa_for_policy(policy: &str, alpha: f64, b: u32) -> Option<f64> {
    let policy = policy.trim();
    let wa = match policy {
        "fifo" => wa_fifo(alpha),
        "greedy" => wa_greedy(alpha, b),
        "random" => wa_random(alpha),
        _ => {
            let d = policy.strip_prefix("d-choices:")?;
            // u32::from_str accepts a leading '+'; the config parser does too, so allow it.
            match d.parse::<u32>() {
                Ok(d) if d >= 1 => wa_d_choices(alpha, b, d),
                _ => return None,
            }
        }
    };
    if wa.is_nan() || b == 0 {
        None
    } else {
        Some(wa)
    }
}

/// The d-choices mean-field fixed point, in tail form.
#[derive(Debug)]
struct DChoicesFixedPoint {
    /// `s[i] = S_i = Σ_{k≥i} x_k` for `i = 0 ..= b` (`s[0] = 1`).
    s: Vec<f64>,
    /// Number of choices `d`.
    d: u32,
}

impl DChoicesFixedPoint {
    /// For a given `λ`, fills `s[1..=b]` from the tail recursion and returns
    /// `(Σ_{i≥1} S_i, d/dλ Σ_{i≥1} S_i)`.
    fn sweep(lambda: f64, d: u32, s: &mut [f64]) -> (f64, f64) {
        let b = s.len() - 1;
        let di = d as i32;
        let df = f64::from(d);
        let (mut t, mut dt) = (0.0f64, 0.0f64); // S_{i+1} and its λ-derivative
        let (mut sum, mut dsum) = (0.0f64, 0.0f64);
        for i in (1..=b).rev() {
            let inv_i = 1.0 / i as f64;
            let c = lambda * inv_i;
            // Root of g(u) = u − t − c(1 − u^d), increasing and convex on [0, ∞). u = t + c is
            // an upper bound (g(t + c) = c (t + c)^d ≥ 0), as is 1 (g(1) = 1 − t > 0), so
            // Newton from min(t + c, 1) decreases monotonically onto the root.
            let mut u = (t + c).min(1.0);
            let mut gp = 1.0;
            let mut ud = 0.0;
            for _ in 0..200 {
                let ud1 = u.powi(di - 1);
                ud = ud1 * u;
                let g = u - t - c * (1.0 - ud);
                gp = 1.0 + c * df * ud1;
                let step = g / gp;
                u -= step;
                if step.abs() <= f64::EPSILON * u {
                    break;
                }
            }
            // Implicit differentiation of u − λ(1 − u^d)/i = t with respect to λ.
            let du = (dt + (1.0 - ud) * inv_i) / gp;
            s[i] = u;
            sum += u;
            dsum += du;
            t = u;
            dt = du;
        }
        (sum, dsum)
    }

    /// Solves for the fixed point with `rho = 1/alpha ∈ (0, 1)`, `b ≥ 1`, `d ≥ 1`.
    fn solve(rho: f64, b: u32, d: u32) -> Self {
        let n = b as usize;
        let target = rho * f64::from(b);
        let mut s = vec![0.0f64; n + 1];
        s[0] = 1.0;
        // F(λ) = Σ S_i − rho b = λ(b − Σ k p_k) − rho b is increasing in λ, F(rho) < 0, and
        // F(λ) ≥ 0 at the random-victim value 1/(alpha − 1) = rho/(1 − rho); widen if not.
        let mut lo = rho;
        let mut hi = rho / (1.0 - rho);
        while Self::sweep(hi, d, &mut s).0 < target {
            lo = hi;
            hi *= 2.0;
        }
        // Start from a point between greedy (d → ∞) and random (d = 1).
        let mut lambda = 0.5 * (lo + hi);
        for _ in 0..200 {
            let (sum, dsum) = Self::sweep(lambda, d, &mut s);
            let f = sum - target;
            if f == 0.0 {
                break;
            }
            if f < 0.0 {
                lo = lambda;
            } else {
                hi = lambda;
            }
            let newton = lambda - f / dsum;
            let next = if newton > lo && newton < hi && newton.is_finite() {
                newton
            } else {
                0.5 * (lo + hi)
            };
            let done = (next - lambda).abs() <= 4.0 * f64::EPSILON * lambda
                || hi - lo <= 4.0 * f64::EPSILON * hi;
            lambda = next;
            if done {
                break;
            }
        }
        Self::sweep(lambda, d, &mut s);
        Self { s, d }
    }

    /// `A = b/(b − Σ_k k p_k)`, using `Σ_k k p_k = Σ_{k≥1} S_k^d`.
    fn wa(&self) -> f64 {
        let b = (self.s.len() - 1) as f64;
        let mean_victim: f64 = self.s[1..].iter().map(|&u| u.powi(self.d as i32)).sum();
        b / (b - mean_victim)
    }

    /// Fractions `x_i = S_i − S_{i+1}`, `i = 0 ..= b`.
    #[cfg(test)]
    fn x(&self) -> Vec<f64> {
        let b = self.s.len() - 1;
        (0..=b)
            .map(|i| self.s[i] - if i < b { self.s[i + 1] } else { 0.0 })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPS: [f64; 3] = [0.07, 0.125, 0.28];
    const BS: [u32; 2] = [64, 256];

    /// ANALYTIC.md's table: (OP, b, FIFO, greedy exact, greedy approx, d=2, d=10, random).
    const TABLE: [(f64, u32, [f64; 6]); 6] = [
        (0.07, 64, [7.8172, 7.0099, 7.0014, 10.2772, 7.3230, 15.2857]),
        (
            0.07,
            256,
            [7.8172, 7.5969, 7.5955, 10.5835, 7.8280, 15.2857],
        ),
        (0.125, 64, [4.6801, 4.3891, 4.3840, 6.1940, 4.5451, 9.0000]),
        (0.125, 256, [4.6801, 4.6026, 4.6023, 6.3055, 4.7298, 9.0000]),
        (0.28, 64, [2.4814, 2.4028, 2.4020, 3.2453, 2.4711, 4.5714]),
        (0.28, 256, [2.4814, 2.4610, 2.4610, 3.2742, 2.5202, 4.5714]),
    ];

    fn assert_rel(got: f64, want: f64, tol: f64, what: &str) {
        let rel = ((got - want) / want).abs();
        assert!(
            rel <= tol,
            "{what}: got {got}, want {want} (rel err {rel:e})"
        );
    }

    #[test]
    fn reference_table() {
        for &(op, b, [fifo, greedy, approx, d2, d10, random]) in &TABLE {
            let a = 1.0 + op;
            let tag = |m: &str| format!("{m} OP={op} b={b}");
            assert_rel(wa_fifo(a), fifo, 5e-4, &tag("fifo"));
            assert_rel(wa_greedy(a, b), greedy, 5e-4, &tag("greedy"));
            assert_rel(wa_greedy_approx(a, b), approx, 5e-4, &tag("greedy approx"));
            assert_rel(wa_d_choices(a, b, 2), d2, 5e-4, &tag("d=2"));
            assert_rel(wa_d_choices(a, b, 10), d10, 5e-4, &tag("d=10"));
            assert_rel(wa_random(a), random, 5e-4, &tag("random"));
        }
    }

    #[test]
    fn fifo_spare_factor_convention() {
        for (sf, want) in [(0.07, 7.3177), (0.125, 4.1820), (0.28, 1.9916)] {
            assert_rel(wa_fifo(1.0 / (1.0 - sf)), want, 5e-4, &format!("Sf={sf}"));
        }
    }

    #[test]
    fn fifo_solves_its_defining_equation() {
        for a in [1.001, 1.02, 1.07, 1.5, 3.0, 10.0] {
            let x = 1.0 - 1.0 / wa_fifo(a);
            let resid = x - (-a * (1.0 - x)).exp();
            assert!(resid.abs() < 1e-13, "alpha={a}: residual {resid:e}");
        }
    }

    #[test]
    fn lambert_identities() {
        let inv_e = (-1.0f64).exp();
        let points = [
            -inv_e,
            -inv_e + 1e-300,
            -inv_e + 1e-17,
            -inv_e + 1e-12,
            -inv_e + 1e-8,
            -inv_e + 1e-6,
            -inv_e + 1e-4,
            -0.36,
            -0.33,
            -0.3,
            -0.2,
            -0.05,
            -1e-10,
            -1e-300,
            1e-300,
            1e-10,
            0.1,
            0.5,
            1.0,
            2.0,
            std::f64::consts::E,
            10.0,
            19.999,
            20.0,
            100.0,
            1e4,
            1e10,
            1e100,
            1e300,
            f64::MAX,
        ];
        for &x in &points {
            let w = lambert_w0(x);
            assert!(w >= -1.0, "W({x}) = {w} below -1");
            if w > 700.0 {
                // w e^w overflows near f64::MAX; compare logarithms instead.
                let resid = (w + w.ln() - x.ln()) / x.ln();
                assert!(resid.abs() < 1e-15, "W({x}) = {w}: ln residual {resid:e}");
                continue;
            }
            let back = w * w.exp();
            // exp amplifies the rounding of w by |w|, so allow for it.
            let scale = x.abs().max(f64::MIN_POSITIVE);
            let tol = 4.0 * f64::EPSILON * (1.0 + w.abs());
            assert!(
                ((back - x) / scale).abs() < tol,
                "W({x}) = {w}: w e^w = {back}, rel err {:e}",
                (back - x) / scale
            );
        }
    }

    #[test]
    fn lambert_known_values() {
        assert_eq!(lambert_w0(0.0), 0.0);
        assert_eq!(lambert_w0(-(-1.0f64).exp()), -1.0);
        assert_rel(lambert_w0(1.0), 0.567_143_290_409_783_8, 1e-15, "omega");
        assert_rel(lambert_w0(std::f64::consts::E), 1.0, 1e-15, "W(e)");
        assert_rel(lambert_w0(2.0 * 2.0f64.exp()), 2.0, 1e-15, "W(2e^2)");
        assert_rel(
            lambert_w0(-0.5f64 * (-0.5f64).exp()),
            -0.5,
            1e-15,
            "W(-e^-.5/2)",
        );
        assert_rel(lambert_w0(1e300), 684.247_208_629_761, 1e-14, "W(1e300)");
        assert_eq!(lambert_w0(f64::INFINITY), f64::INFINITY);
        assert!(lambert_w0(-0.4).is_nan());
        assert!(lambert_w0(f64::NAN).is_nan());
        // Near the branch point W(x) ≈ −1 + sqrt(2(e x + 1)).
        let eps = 1e-10;
        let x = -(-1.0f64).exp() + eps;
        let approx = -1.0 + (2.0 * std::f64::consts::E * eps).sqrt();
        assert!((lambert_w0(x) - approx).abs() < 1e-9);
    }

    #[test]
    fn lambert_against_high_precision() {
        // W0 of the f64 nearest each x, from mpmath at 40 digits.
        let cases = [
            (-0.367_879_441_171_4, -0.999_999_520_210_404_5),
            (-0.367_879_441, -0.999_969_470_698_208_6),
            (-0.3678, -0.979_360_714_957_830_5),
            (-0.36, -0.806_084_315_970_817_6),
            (-0.33, -0.603_266_649_755_133_1),
            (-0.3, -0.489_402_227_180_214_9),
            (-0.2999, -0.489_082_881_808_398_3),
            (-0.1, -0.111_832_559_158_962_97),
            (-1e-5, -1.000_010_000_150_002_7e-5),
            (1e-5, 9.999_900_001_499_974e-6),
            (0.3, 0.236_755_310_788_559_3),
            (1.0, 0.567_143_290_409_783_8),
            (3.0, 1.049_908_894_964_04),
            (19.99, 2.204_659_206_454_332),
            (20.01, 2.205_347_194_340_988_3),
            (55.0, 2.931_737_824_024_537_4),
            (1e5, 9.284_571_428_622_109),
            (1e20, 42.306_755_091_738_394),
            (1e200, 454.398_045_033_714),
        ];
        for (x, want) in cases {
            assert_rel(lambert_w0(x), want, 1e-14, &format!("W({x})"));
        }
    }

    #[test]
    fn lambert_series_meets_halley() {
        // Both branches of the implementation agree where they hand over.
        let inv_e = (-1.0f64).exp();
        for q in [1e-7, 1e-6, 2e-6, 1e-5, 1e-4] {
            let x = -inv_e + q * inv_e;
            let p = (2.0 * q).sqrt();
            let series = branch_series(p);
            let halley = halley_exp(x, series + 1e-3 * p);
            assert!(
                (series - halley).abs() < 1e-14 + 1e-16 / p,
                "q={q}: series {series} vs halley {halley}"
            );
        }
    }

    #[test]
    fn d1_mean_field_equals_random() {
        for a in [1.02, 1.07, 1.125, 1.28, 2.0, 3.0] {
            for b in [1u32, 8, 64, 256, 1024] {
                let fp = DChoicesFixedPoint::solve(1.0 / a, b, 1);
                assert_rel(fp.wa(), wa_random(a), 1e-12, &format!("d=1 a={a} b={b}"));
                assert_eq!(wa_d_choices(a, b, 1), wa_random(a));
            }
        }
    }

    #[test]
    fn d_choices_monotone_and_above_greedy() {
        for a in [1.02, 1.07, 1.125, 1.28, 2.0, 3.0] {
            for b in [8u32, 64, 256, 1024] {
                let greedy = wa_greedy(a, b);
                let mut prev = wa_random(a);
                for d in [2u32, 3, 4, 5, 8, 10, 16, 32, 64, 128, 512] {
                    let w = wa_d_choices(a, b, d);
                    // Once d-choices has reached greedy's A = 1 (every victim empty; b = 8,
                    // alpha = 3) the sequence can only stay there.
                    let at_floor = greedy == 1.0 && w - 1.0 < 1e-12;
                    assert!(w < prev || at_floor, "a={a} b={b} d={d}: {w} !< {prev}");
                    assert!(w > greedy || at_floor, "a={a} b={b} d={d}: {w} !> {greedy}");
                    prev = w;
                }
                // Large d approaches greedy.
                let far = wa_d_choices(a, b, 100_000);
                assert_rel(far, greedy, 1e-2, &format!("d=1e5 a={a} b={b}"));
            }
        }
    }

    #[test]
    fn d_choices_is_a_fixed_point() {
        for (a, b, d) in [
            (1.02, 1024, 64),
            (1.07, 64, 2),
            (1.28, 256, 10),
            (3.0, 8, 3),
        ] {
            let rho = 1.0 / a;
            let fp = DChoicesFixedPoint::solve(rho, b, d);
            let x = fp.x();
            assert!(x.iter().all(|&v| v >= -1e-15), "negative fraction");
            let total: f64 = x.iter().sum();
            assert!((total - 1.0).abs() < 1e-12);
            let mean: f64 = x.iter().enumerate().map(|(i, &v)| i as f64 * v).sum();
            assert_rel(mean, rho * f64::from(b), 1e-12, "mass constraint");
            let deriv = ode_rhs(&x, rho, d);
            let worst = deriv.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(worst < 1e-13, "a={a} b={b} d={d}: |dx/dt| = {worst:e}");
        }
    }

    /// Right-hand side of Van Houdt's ODE, written out directly from ANALYTIC.md.
    fn ode_rhs(x: &[f64], rho: f64, d: u32) -> Vec<f64> {
        let b = x.len() - 1;
        let bf = b as f64;
        let mut tail = vec![0.0; b + 2];
        for i in (0..=b).rev() {
            tail[i] = tail[i + 1] + x[i];
        }
        let p: Vec<f64> = (0..=b)
            .map(|i| tail[i].powi(d as i32) - tail[i + 1].powi(d as i32))
            .collect();
        let m: f64 = p.iter().enumerate().map(|(k, &v)| k as f64 * v).sum();
        (0..=b)
            .map(|i| {
                let up = if i < b {
                    (i + 1) as f64 * x[i + 1]
                } else {
                    0.0
                };
                let birth = if i == b { 1.0 } else { 0.0 };
                (up - i as f64 * x[i]) / (rho * bf) + (birth - p[i]) / (bf - m)
            })
            .collect()
    }

    #[test]
    fn d_choices_matches_ode_integration() {
        for (a, b, d) in [(1.5, 8u32, 2u32), (1.25, 16, 3), (1.125, 32, 10)] {
            let rho = 1.0 / a;
            let bn = b as usize;
            // Start with every block at the two integers around rho·b (mass-consistent).
            let rb = rho * f64::from(b);
            let lo = rb.floor() as usize;
            let frac = rb - lo as f64;
            let mut x = vec![0.0; bn + 1];
            x[lo] = 1.0 - frac;
            x[(lo + 1).min(bn)] += frac;
            let dt = 0.25 * rho;
            let mut converged = false;
            for _ in 0..2_000_000 {
                let dx = ode_rhs(&x, rho, d);
                let mut change = 0.0f64;
                for (xi, di) in x.iter_mut().zip(&dx) {
                    *xi += dt * di;
                    change = change.max((dt * di).abs());
                }
                if change < 1e-15 {
                    converged = true;
                    break;
                }
            }
            assert!(converged, "ODE did not settle for a={a} b={b} d={d}");
            let tail = |i: usize| x[i..].iter().sum::<f64>();
            let m: f64 = (1..=bn).map(|i| tail(i).powi(d as i32)).sum();
            let ode_wa = f64::from(b) / (f64::from(b) - m);
            assert_rel(
                wa_d_choices(a, b, d),
                ode_wa,
                1e-9,
                &format!("ODE a={a} b={b} d={d}"),
            );
        }
    }

    #[test]
    fn greedy_properties() {
        for &op in &OPS {
            for &b in &BS {
                let a = 1.0 + op;
                // Greedy beats FIFO and random; greedy → FIFO as b → ∞.
                assert!(wa_greedy(a, b) < wa_fifo(a));
                assert!(wa_greedy(a, b) < wa_random(a));
            }
            assert_rel(wa_greedy(1.0 + op, 1 << 16), wa_fifo(1.0 + op), 1e-3, "b→∞");
        }
        // Continuous in alpha across the thresholds rho·b = c(j), and decreasing in alpha.
        for b in [8u32, 64, 256] {
            let h = |j: u32| (j + 1..=b).map(|k| 1.0 / f64::from(k)).sum::<f64>();
            for j in 0..b {
                let alpha_j = f64::from(b) * h(j) / f64::from(b - j); // rho·b = c(j)
                if alpha_j <= 1.0 {
                    continue;
                }
                let below = wa_greedy(alpha_j * (1.0 - 1e-12), b);
                let above = wa_greedy(alpha_j * (1.0 + 1e-12), b);
                assert_rel(above, below, 1e-9, &format!("continuity b={b} j={j}"));
            }
            let mut prev = f64::INFINITY;
            let mut a = 1.0;
            while a < 8.0 {
                a += 1e-3;
                let w = wa_greedy(a, b);
                assert!(w <= prev, "b={b}: increase at alpha={a}: {prev} -> {w}");
                prev = w;
            }
        }
        assert_eq!(wa_greedy(6.0, 64), 1.0); // rho ≤ 1/H_64: every victim is empty
        assert_eq!(wa_greedy(1.5, 1), 1.0);
    }

    #[test]
    fn degenerate_inputs() {
        assert_eq!(wa_random(1.0), f64::INFINITY);
        assert_eq!(wa_fifo(1.0), f64::INFINITY);
        assert_eq!(wa_greedy(1.0, 64), f64::INFINITY);
        assert_eq!(wa_d_choices(1.0, 64, 4), f64::INFINITY);
        assert!(wa_fifo(0.9).is_nan());
        assert!(wa_greedy(f64::NAN, 64).is_nan());
        assert!(wa_greedy(1.1, 0).is_nan());
        assert!(wa_d_choices(1.1, 64, 0).is_nan());
        assert_eq!(wa_fifo(f64::INFINITY), 1.0);
        // Just above alpha = 1 the Lambert argument sits on the branch point; there
        // A ≈ alpha²/(2(alpha − 1)).
        for delta in [1e-12, 1e-9, 1e-6] {
            let a = 1.0 + delta;
            let want = a * a / (2.0 * (a - 1.0));
            assert_rel(
                wa_fifo(a),
                want,
                10.0 * delta,
                &format!("fifo near 1, {delta}"),
            );
        }
    }

    #[test]
    fn policy_names() {
        let (a, b) = (1.07, 256);
        assert_eq!(wa_for_policy("fifo", a, b), Some(wa_fifo(a)));
        assert_eq!(wa_for_policy("greedy", a, b), Some(wa_greedy(a, b)));
        assert_eq!(wa_for_policy("random", a, b), Some(wa_random(a)));
        assert_eq!(
            wa_for_policy("d-choices:10", a, b),
            Some(wa_d_choices(a, b, 10))
        );
        assert_eq!(wa_for_policy("d-choices:1", a, b), Some(wa_random(a)));
        assert_eq!(wa_for_policy(" greedy ", a, b), Some(wa_greedy(a, b)));
        for bad in [
            "d-choices:0",
            "d-choices:x",
            "d-choices:",
            "d-choices",
            "d-choices:-2",
            "d-choices:2.5",
            "d-choices:99999999999",
            "cost-benefit",
            "cb",
            "windowed-greedy:64",
            "Greedy",
            "lru",
            "",
        ] {
            assert_eq!(wa_for_policy(bad, a, b), None, "{bad:?}");
        }
        assert_eq!(wa_for_policy("greedy", 0.5, b), None);
        assert_eq!(wa_for_policy("fifo", f64::NAN, b), None);
        assert_eq!(wa_for_policy("greedy", a, 0), None);
        assert_eq!(wa_for_policy("fifo", 1.0, b), Some(f64::INFINITY));
    }
}
