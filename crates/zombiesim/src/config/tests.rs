use super::*;

#[test]
fn default_preset_loads_and_validates() {
    let cfg = Config::preset("default").unwrap();
    assert_eq!(cfg.flash.pages_per_block, 256);
    assert_eq!(cfg.gc.policy, PolicySpec::Greedy);
    cfg.validate().unwrap();
}

#[test]
fn unknown_preset_names_the_known_ones() {
    let e = Config::preset("nope").unwrap_err();
    assert!(e.to_string().contains("default"), "{e}");
}

#[test]
fn dotted_overrides() {
    let mut cfg = Config::preset("default").unwrap();
    cfg.set("gc.policy", "d-choices:10").unwrap();
    assert_eq!(cfg.gc.policy, PolicySpec::DChoices(10));
    cfg.set("flash.page_size", "16KiB").unwrap();
    assert_eq!(cfg.flash.page_size.bytes(), 16384);
    cfg.set("ftl.over_provisioning", "0.28").unwrap();
    assert_eq!(cfg.ftl.over_provisioning, 0.28);
    cfg.set("gc.scope", "plane").unwrap();
    assert_eq!(cfg.gc.scope, GcScope::Plane);
    assert_eq!(cfg.get("gc.policy").unwrap(), "\"d-choices:10\"");
}

#[test]
fn errors_name_the_key() {
    let mut cfg = Config::preset("default").unwrap();
    let cases = [
        ("gc.polcy", "greedy", "gc.polcy", "gc.policy"),
        ("gc.policy", "gredy", "gc.policy", "unknown policy"),
        ("flash.pages_per_block", "-3", "flash.pages_per_block", ""),
        (
            "flash.pages_per_block",
            "1",
            "flash.pages_per_block",
            "at least 2",
        ),
        (
            "ftl.over_provisioning",
            "0",
            "ftl.over_provisioning",
            "(0, 4)",
        ),
        (
            "ftl.over_provisioning",
            "-0.1",
            "ftl.over_provisioning",
            "(0, 4)",
        ),
        (
            "ftl.over_provisioning",
            "0.001",
            "ftl.over_provisioning",
            "spare blocks",
        ),
        ("flash.page_size", "1000", "flash.page_size", "power of two"),
        ("gc.high_watermark", "1", "gc.high_watermark", "below"),
        (
            "gc.postpone_below_invalid",
            "1",
            "gc.postpone_below_invalid",
            "below 1",
        ),
        (
            "gc.postpone_below_invalid",
            "0.125",
            "gc.postpone_below_invalid",
            "raise gc.high_watermark",
        ),
        ("gc", "1", "gc", "section"),
        ("timing.read_us", "-1", "timing.read_us", "non-negative"),
        (
            "timing.channel_mb_s",
            "0",
            "timing.channel_mb_s",
            "positive",
        ),
        (
            "interface.queue_depth",
            "0",
            "interface.queue_depth",
            "at least 1",
        ),
    ];
    for (key, value, want_key, want_text) in cases {
        let before = cfg.clone();
        match cfg.set(key, value) {
            Err(Error::Config { key: k, reason, .. }) => {
                assert_eq!(k, want_key, "{key}={value}: {reason}");
                assert!(reason.contains(want_text), "{key}={value}: {reason}");
            }
            other => panic!("{key}={value}: expected a config error, got {other:?}"),
        }
        assert_eq!(
            cfg, before,
            "a failed override must leave the config unchanged"
        );
    }
}

#[test]
fn unknown_keys_in_files_are_rejected_with_their_path() {
    let text = "[flash]\nchannels = 2\nchanels = 3\n";
    match Config::from_toml_str(text, "my.toml") {
        Err(e @ Error::Config { .. }) => {
            assert_eq!(e.to_string().split(": ").next(), Some("my.toml:3"), "{e}");
            assert!(matches!(e, Error::Config { ref key, .. } if key == "flash.chanels"));
        }
        other => panic!("{other:?}"),
    }
    // A misspelt key or section in a file gets the hint `--set` gives.
    for (text, hint) in [
        ("[gc]\npolcy = \"greedy\"\n", "did you mean `gc.policy`?"),
        ("[gcc]\npolicy = \"greedy\"\n", "did you mean `gc`?"),
        ("[flash]\nchanels = 3\n", "did you mean `flash.channels`?"),
    ] {
        let e = Config::from_toml_str(text, "my.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains(hint), "{e}");
    }
    // Nothing near: the names the section takes.
    let e = Config::from_toml_str("[gc]\nzzzzzzzzzz = 1\n", "my.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("expected one of `policy`"), "{e}");
    let bad_value = "[gc]\npolicy = \"gredy\"\n";
    let e = Config::from_toml_str(bad_value, "my.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("my.toml:2: config key `gc.policy`: unknown policy"),
        "{e}"
    );
    assert!(!e.contains('\n'), "{e}");
    match Config::from_toml_str("[flash\n", "my.toml") {
        Err(Error::Input { file, line, .. }) => {
            assert_eq!(file, "my.toml");
            assert_eq!(line, 1);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn toml_round_trip() {
    let mut cfg = Config::preset("default").unwrap();
    cfg.set("gc.policy", "windowed-greedy:8").unwrap();
    let back = Config::from_toml_str(&cfg.to_toml(), "round-trip").unwrap();
    assert_eq!(back, cfg);
}

#[test]
fn schemes_apply() {
    let names: Vec<_> = scheme_names().into_iter().map(|s| s.name).collect();
    assert!(names.contains(&"baseline".to_string()));
    let mut cfg = Config::preset("default").unwrap();
    cfg.set_many(&scheme_settings("cost-benefit").unwrap())
        .unwrap();
    assert_eq!(cfg.gc.policy, PolicySpec::CostBenefit);
    assert!(scheme_settings("nope").is_err());
}

#[test]
fn geometry_and_op_convention() {
    let cfg = Config::preset("default").unwrap();
    let g = super::Geometry::new(&cfg).unwrap();
    assert_eq!(g.blocks, 1024);
    assert_eq!(g.physical_pages, 1024 * 256);
    assert_eq!(g.logical_pages, (1024.0 * 256.0 / 1.07f64).floor() as u64);
    assert!((g.over_provisioning() - 0.07).abs() < 1e-4);
}

#[test]
fn every_preset_loads_with_the_papers_numbers() {
    for name in preset_names() {
        let cfg = Config::preset(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!cfg.description.is_empty(), "{name} has no description");
    }
    let gib = |c: &Config| {
        let g = super::Geometry::new(c).unwrap();
        (g.physical_pages * g.page_size) as f64 / (1u64 << 30) as f64
    };
    let zc = Config::preset("zombie-chasing").unwrap();
    let g = super::Geometry::new(&zc).unwrap();
    assert_eq!(
        g.blocks as u64 * g.pages_per_block as u64 * g.page_size,
        32 << 30
    );
    let logical_gib = (g.logical_pages * g.page_size) as f64 / (1u64 << 30) as f64;
    assert!((logical_gib - 29.8).abs() < 0.05, "{logical_gib}");
    assert_eq!(zc.gc.scope, GcScope::Bank);
    assert_eq!(
        zc.gc.cb_age,
        super::CbAge::ModifiedTime,
        "000's text read literally"
    );
    assert_eq!(zc.ftl.regions, 3, "DAC with three regions");
    assert_eq!(zc.host.cache.bytes(), 4 << 30);
    assert_eq!(zc.host.threads, 16);
    assert_eq!(
        (zc.host.dirty_expire_s, zc.host.dirty_writeback_s),
        (30.0, 5.0),
        "Linux writeback defaults (000 Table 2)"
    );
    let dvp = Config::preset("dead-value-pool").unwrap();
    assert_eq!(
        (
            dvp.timing.read_us,
            dvp.timing.program_us,
            dvp.timing.erase_us
        ),
        (75.0, 400.0, 3800.0)
    );
    assert!((gib(&dvp) - 1024.0).abs() < 1e-9);
    let sg = Config::preset("shadowgc-1tb").unwrap();
    assert_eq!(
        (sg.timing.program_us, sg.timing.fast_program_us),
        (600.0, 300.0)
    );
    assert_eq!(sg.flash.pages_per_block, 512);
    let vma = Config::preset("vma-journaling").unwrap();
    assert_eq!(vma.flash.blocks_per_plane, 262_144);
    assert_eq!((vma.timing.read_us, vma.timing.program_us), (88.0, 263.0));
    let ba = Config::preset("ba-gc").unwrap();
    assert_eq!(
        (ba.timing.read_us, ba.timing.program_us, ba.timing.erase_us),
        (25.0, 200.0, 2000.0)
    );
}

#[test]
fn background_gc_needs_a_watermark_above_the_high_one() {
    let mut cfg = Config::preset("default").unwrap();
    let err = cfg
        .set_many(&[
            ("gc.background".into(), "true".into()),
            ("gc.background_watermark".into(), "2".into()),
        ])
        .unwrap_err();
    assert!(
        matches!(err, Error::Config { ref key, .. } if key == "gc.background_watermark"),
        "{err}"
    );
    cfg.set("gc.background", "true").unwrap();
    assert_eq!(cfg.gc.background_watermark, 4);
}

#[test]
fn cost_benefits_age_is_a_page_mapped_key() {
    let mut cfg = Config::default();
    cfg.set("gc.cb_age", "modified-time").unwrap();
    assert_eq!(cfg.gc.cb_age, super::CbAge::ModifiedTime);
    assert!(cfg.set("gc.cb_age", "yesterday").is_err());
    // Set before, by an earlier call, the age is dropped with a note under FAST...
    let mut fast = cfg.clone();
    let notes = fast.set("ftl.kind", "fast").unwrap();
    assert!(notes.iter().any(|n| n.contains("gc.cb_age")), "{notes:?}");
    assert_eq!(fast.gc.cb_age, GcConfig::default().cb_age);
    // ...and refused when set together with it.
    let e = Config::default()
        .set_many(&[
            ("gc.cb_age".into(), "modified-time".into()),
            ("ftl.kind".into(), "fast".into()),
        ])
        .unwrap_err()
        .to_string();
    assert!(e.contains("gc.cb_age"), "{e}");
}

#[test]
fn presets_name_the_scheduler_their_timed_runs_use() {
    // The default preset counts, and its timed runs schedule the dies as a current drive:
    // the scheduler a preset names for timed runs is no error while it counts.
    let mut cfg = Config::preset("default").unwrap();
    assert!(!cfg.timing.enabled);
    assert_eq!(cfg.timing.scheduler, Scheduler::Suspend);
    let round_trip = Config::from_toml_str(&cfg.to_toml(), "stored.toml").unwrap();
    assert_eq!(round_trip.timing.scheduler, Scheduler::Suspend);
    cfg.set("timing.enabled", "true").unwrap();
    assert_eq!(cfg.timing.scheduler, Scheduler::Suspend);
    // Set by name on a counting run, keys only a timed run reads are refused, naming
    // the key and `timing.enabled`: a scheduler other than fifo, the suspend
    // scheduler's keys, and upkeep off the clock.
    let refused = |key: &str, value: &str| {
        let mut counting = Config::preset("default").unwrap();
        counting.set(key, value).unwrap_err().to_string()
    };
    for (key, value) in [
        ("timing.scheduler", "rps"),
        ("timing.max_suspensions", "2"),
        ("timing.upkeep_time", "false"),
    ] {
        let e = refused(key, value);
        assert!(e.contains(key) && e.contains("timing.enabled"), "{e}");
    }
    let mut counting = Config::preset("default").unwrap();
    counting.set("timing.scheduler", "fifo").unwrap();
    // The paper presets say which scheduler their devices had.
    for (preset, scheduler) in [
        ("zombie-chasing", Scheduler::Fifo),
        ("dead-value-pool", Scheduler::Rps),
        ("shadowgc-1tb", Scheduler::Fifo),
        ("vma-journaling", Scheduler::Fifo),
        ("ba-gc", Scheduler::Fifo),
    ] {
        assert_eq!(
            Config::preset(preset).unwrap().timing.scheduler,
            scheduler,
            "{preset}"
        );
    }
}

#[test]
fn fast_write_without_notifications_is_refused_naming_notify_mode() {
    let mut cfg = Config::preset("shadowgc-1tb").unwrap();
    cfg.set_many(&[
        ("host.buffer".into(), "128MiB".into()),
        ("timing.enabled".into(), "true".into()),
    ])
    .unwrap();
    let hgc = [
        ("gc.zombie_block".to_string(), "true".to_string()),
        ("gc.fast_write".to_string(), "true".to_string()),
    ];
    let mut silent = cfg.clone();
    let mut pairs = hgc.to_vec();
    pairs.push(("notify.mode".into(), "none".into()));
    let e = silent.set_many(&pairs).unwrap_err();
    assert!(
        matches!(e, Error::Config { ref key, .. } if key == "notify.mode"),
        "{e}"
    );
    assert!(e.to_string().contains("gc.fast_write"), "{e}");
    cfg.set_many(&hgc).unwrap();
    assert_eq!(cfg.notify.mode, NotifyMode::Piggyback);
}

#[test]
fn a_presets_keys_for_another_ftl_are_dropped_with_a_note_the_users_refused() {
    // ba-gc is a FAST preset: with ftl.kind = page its log blocks are read by nothing.
    let mut cfg = Config::preset("ba-gc").unwrap();
    let notes = cfg.set("ftl.kind", "page").unwrap();
    assert_eq!(cfg.ftl.log_blocks, FtlConfig::default().log_blocks);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("ftl.log_blocks = 128") && notes[0].contains("`fast` FTL"),
        "{notes:?}"
    );
    // Named by the caller, the same key is refused, naming it.
    let mut cfg = Config::preset("ba-gc").unwrap();
    let e = cfg
        .set_many(&[
            ("ftl.kind".into(), "page".into()),
            ("ftl.log_blocks".into(), "64".into()),
        ])
        .unwrap_err();
    assert!(
        matches!(e, Error::Config { ref key, unread: true, .. } if key == "ftl.log_blocks"),
        "{e}"
    );
    // One cell of a comparison: a named key nothing reads is dropped, the axis applies.
    let mut cell = Config::preset("default").unwrap();
    let pairs = [
        ("ftl.cmt_entries".to_string(), "4096".to_string()),
        ("ftl.kind".to_string(), "page".to_string()),
    ];
    let notes = cell
        .set_many_where_read(&pairs, &["ftl.cmt_entries".to_string()])
        .unwrap();
    assert_eq!(cell.ftl.kind, FtlKind::Page);
    assert!(
        notes[0].starts_with("`ftl.cmt_entries = 4096` dropped"),
        "{notes:?}"
    );
    let mut dftl = Config::preset("default").unwrap();
    let pairs = [
        ("ftl.cmt_entries".to_string(), "4096".to_string()),
        ("ftl.kind".to_string(), "dftl".to_string()),
    ];
    assert!(dftl
        .set_many_where_read(&pairs, &["ftl.cmt_entries".to_string()])
        .unwrap()
        .is_empty());
    assert_eq!(dftl.ftl.cmt_entries, 4096);
}
