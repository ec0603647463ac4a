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
mod tests;
