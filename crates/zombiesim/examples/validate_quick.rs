//! Run the validation cases from Rust (the CLI's `zombiesim validate` is the usual way).
//! `cargo run --release --example validate_quick [full]`
fn main() {
    let full = std::env::args().any(|a| a == "full");
    for case in zombiesim::validate::cases(full) {
        let row = zombiesim::validate::run_case(&case, 1, &mut |_| true).expect("case runs");
        println!(
            "{:<14} op={:<6} b={:<4} sim={:.4} analytic={:.4} nominal={:.4} op_eff={:.5} err={:+.2}% {} {:.1}s",
            row.case.policy,
            row.case.over_provisioning,
            row.case.pages_per_block,
            row.simulated_waf,
            row.analytic_waf,
            row.analytic_waf_nominal,
            row.effective_over_provisioning,
            row.error * 100.0,
            if row.ok { "ok" } else { "OFF" },
            row.wall_s
        );
    }
}
