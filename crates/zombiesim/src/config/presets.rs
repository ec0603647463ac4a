//! Presets and schemes embedded in the binary from the repository's `presets/` folder.

use crate::error::{Error, Result};

const PRESETS: &[(&str, &str)] = &[
    ("default", include_str!("../../../../presets/default.toml")),
    (
        "zombie-chasing",
        include_str!("../../../../presets/zombie-chasing.toml"),
    ),
    (
        "dead-value-pool",
        include_str!("../../../../presets/dead-value-pool.toml"),
    ),
    (
        "shadowgc-1tb",
        include_str!("../../../../presets/shadowgc-1tb.toml"),
    ),
    (
        "vma-journaling",
        include_str!("../../../../presets/vma-journaling.toml"),
    ),
    ("ba-gc", include_str!("../../../../presets/ba-gc.toml")),
    ("fdp", include_str!("../../../../presets/fdp.toml")),
];

const SCHEMES_TOML: &str = include_str!("../../../../presets/schemes.toml");

/// Names of the embedded presets.
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

/// The TOML text of a preset.
pub fn preset_toml(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// A scheme: a named bundle of dotted config settings.
#[derive(Clone, Debug, PartialEq)]
pub struct SchemeInfo {
    pub name: String,
    pub description: String,
    /// `(dotted key, TOML value)` in file order.
    pub settings: Vec<(String, String)>,
}

fn schemes() -> Vec<SchemeInfo> {
    let table: toml::Table = SCHEMES_TOML.parse().expect("presets/schemes.toml parses");
    table
        .into_iter()
        .map(|(name, v)| {
            let description = v
                .get("description")
                .and_then(|d| d.as_str())
                .unwrap_or_default()
                .to_string();
            let settings = v
                .get("set")
                .and_then(|s| s.as_table())
                .map(|t| t.iter().map(|(k, v)| (k.clone(), v.to_string())).collect())
                .unwrap_or_default();
            SchemeInfo {
                name,
                description,
                settings,
            }
        })
        .collect()
}

/// Every scheme, in name order.
pub fn scheme_names() -> Vec<SchemeInfo> {
    let mut all = schemes();
    all.sort_by(|a, b| a.name.cmp(&b.name));
    all
}

/// The dotted settings of one scheme.
pub fn scheme_settings(name: &str) -> Result<Vec<(String, String)>> {
    let all = schemes();
    all.iter()
        .find(|s| s.name == name)
        .map(|s| s.settings.clone())
        .ok_or_else(|| {
            let known: Vec<_> = all.iter().map(|s| s.name.as_str()).collect();
            Error::config(
                "scheme",
                format!("unknown scheme `{name}` (known: {})", known.join(", ")),
            )
        })
}
