//! The quick analytic validation set must stay within tolerance (the full table
//! runs in `make bench` and `zombiesim validate --full`).

#[test]
fn quick_validation_is_within_tolerance() {
    for case in zombiesim::validate::cases(false) {
        let row = zombiesim::validate::run_case(&case, 1, &mut |_| true).unwrap();
        assert!(
            row.ok,
            "{} OP {} b {}: simulated {:.4} vs analytic {:.4} ({:+.2}%)",
            case.policy,
            case.over_provisioning,
            case.pages_per_block,
            row.simulated_waf,
            row.analytic_waf,
            row.error * 100.0
        );
        assert!(row.effective_over_provisioning < case.over_provisioning);
    }
}
