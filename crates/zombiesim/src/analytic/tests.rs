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
